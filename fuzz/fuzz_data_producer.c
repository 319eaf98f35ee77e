/*
 * fuzz_data_producer.c - see fuzz_data_producer.h.
 */
#include "fuzz_data_producer.h"

void fuzz_producer_init(fuzz_producer *p, const uint8_t *data, size_t size) {
    p->data = data;
    p->size = data ? size : 0;
}

/* Takes up to nbytes from the tail, most significant first. */
static uint64_t take(fuzz_producer *p, unsigned nbytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < nbytes && p->size > 0; i++) {
        v = (v << 8) | p->data[p->size - 1];
        p->size--;
    }
    return v;
}

uint64_t fuzz_producer_u64_range(fuzz_producer *p, uint64_t min, uint64_t max) {
    if (min >= max)
        return min;
    uint64_t range = max - min;
    unsigned nbytes = 0;
    for (uint64_t r = range; r != 0; r >>= 8)
        nbytes++;
    uint64_t v = take(p, nbytes);
    if (range == UINT64_MAX)
        return v; /* min == 0 here */
    return min + v % (range + 1);
}

uint32_t fuzz_producer_u32_range(fuzz_producer *p, uint32_t min, uint32_t max) {
    return (uint32_t)fuzz_producer_u64_range(p, min, max);
}

uint64_t fuzz_producer_u64(fuzz_producer *p) {
    return fuzz_producer_u64_range(p, 0, UINT64_MAX);
}

int fuzz_producer_bool(fuzz_producer *p) {
    return (int)(take(p, 1) & 1);
}

int fuzz_producer_one_in(fuzz_producer *p, uint32_t n) {
    if (n <= 1)
        return 1;
    /* an exhausted producer gives 0 -> "yes" would make empty inputs take
     * every rare branch; offset by one so exhaustion means "no" */
    return fuzz_producer_u32_range(p, 0, n - 1) == n - 1;
}

size_t fuzz_producer_remaining(const fuzz_producer *p) {
    return p->size;
}

int fuzz_producer_empty(const fuzz_producer *p) {
    return p->size == 0;
}

size_t fuzz_producer_reserve_payload(fuzz_producer *p, size_t max_params) {
    if (max_params > p->size)
        max_params = p->size;
    size_t nparams = (size_t)fuzz_producer_u64_range(p, 0, max_params);
    if (nparams > p->size)
        nparams = p->size;
    size_t payload = p->size - nparams;
    p->data += payload;
    p->size = nparams;
    return payload;
}
