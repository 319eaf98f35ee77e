/*
 * sqlexec.c - test helper: runs SQL on an SQLite database, so the CLI tests
 * can build legacy databases (good and deliberately bad) without needing
 * the sqlite3 shell.
 *
 *   sqlexec DB "SQL..."    executes the statements; prints the rows of
 *                          each, columns separated by '|', NULL as "NULL"
 */
#include <stdio.h>

#include <sqlite3.h>

static int print_row(void *ctx, int n, char **vals, char **names) {
    (void)ctx;
    (void)names;
    for (int i = 0; i < n; i++)
        printf("%s%s", i ? "|" : "", vals[i] ? vals[i] : "NULL");
    printf("\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: sqlexec DB SQL\n");
        return 2;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) {
        fprintf(stderr, "sqlexec: %s: %s\n", argv[1], db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return 1;
    }
    char *err = NULL;
    int rc = sqlite3_exec(db, argv[2], print_row, NULL, &err);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "sqlexec: %s\n", err ? err : "error");
        sqlite3_free(err);
    }
    if (sqlite3_close(db) != SQLITE_OK && rc == SQLITE_OK)
        rc = SQLITE_ERROR;
    return rc == SQLITE_OK ? 0 : 1;
}
