/*
 * fuzz_data_producer.h - draws parameters from a fuzz input.
 *
 * Numbers are taken from the END of the input, so that a target can keep the
 * front as payload (file bytes, trace text) and a mutation of a parameter
 * does not shift the payload (zstd's tests/fuzz/fuzz_data_producer.c does the
 * same). An exhausted producer returns the minimum of every range, so any
 * input, even empty, is a valid program for the target.
 */
#ifndef FUZZ_DATA_PRODUCER_H
#define FUZZ_DATA_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

typedef struct fuzz_producer {
    const uint8_t *data; /* front of what is left */
    size_t size;         /* bytes left */
} fuzz_producer;

void fuzz_producer_init(fuzz_producer *p, const uint8_t *data, size_t size);

/* A number in [min, max] (min <= max) built from as few tail bytes as the
 * range needs. */
uint32_t fuzz_producer_u32_range(fuzz_producer *p, uint32_t min, uint32_t max);
uint64_t fuzz_producer_u64_range(fuzz_producer *p, uint64_t min, uint64_t max);
uint64_t fuzz_producer_u64(fuzz_producer *p);
int fuzz_producer_bool(fuzz_producer *p);
/* 1 with probability about 1 / n (n >= 1). */
int fuzz_producer_one_in(fuzz_producer *p, uint32_t n);

size_t fuzz_producer_remaining(const fuzz_producer *p);
int fuzz_producer_empty(const fuzz_producer *p);

/* Reserves a tail of at most max bytes (its length drawn from the input) for
 * parameters, and returns the length of the front that stays as payload;
 * parameters keep coming from the reserved tail only. The payload starts
 * where p->data pointed before the call: save that pointer first. */
size_t fuzz_producer_reserve_payload(fuzz_producer *p, size_t max_params);

#endif /* FUZZ_DATA_PRODUCER_H */
