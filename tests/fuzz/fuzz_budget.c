/*
 * fuzz_budget.c - the budget file parser through the public
 * header: whatever the bytes, hscope_budget_parse() either fails with
 * HSCOPE_ERR_PARSE (or _LIMIT) and a message that names the budget, a
 * line within the input and nothing past the message buffer, or returns
 * a budget of at least one rule whose count and dump need are sane.
 * Parsing the same bytes twice gives the same answer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapscope/heapscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "fuzz invariant violated at %s:%d: %s\n", __FILE__,  \
                    __LINE__, #c);                                                 \
            abort();                                                               \
        }                                                                          \
    } while (0)

static uint64_t
lines_of(const uint8_t *data, size_t size)
{
    uint64_t n = 1;
    for (size_t i = 0; i < size; i++)
        n += data[i] == '\n';
    return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hscope_budget_t *b = NULL, *b2 = NULL;
    hscope_error err = HSCOPE_ERROR_INIT, err2 = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_budget_parse(&b, (const char *)data, size, "fz.toml", &err);
    hscope_status st2 = hscope_budget_parse(&b2, (const char *)data, size, "fz.toml", &err2);
    CHECK(st == st2);
    if (st == HSCOPE_OK) {
        CHECK(b != NULL && b2 != NULL);
        CHECK(hscope_budget_rule_count(b) >= 1);
        CHECK(hscope_budget_rule_count(b) == hscope_budget_rule_count(b2));
        CHECK(hscope_budget_rule_count(b) <= lines_of(data, size));
        uint32_t need = hscope_budget_dumps_needed(b);
        CHECK(need == 1 || need == 3);
    } else {
        CHECK(b == NULL && b2 == NULL);
        CHECK(st == HSCOPE_ERR_PARSE);
        CHECK(memchr(err.message, '\0', sizeof(err.message)) != NULL);
        CHECK(strncmp(err.message, "fz.toml", 7) == 0);
        CHECK(err.line <= lines_of(data, size));
        CHECK(strcmp(err.message, err2.message) == 0 && err.line == err2.line);
    }
    hscope_budget_free(b);
    hscope_budget_free(b2);
    return 0;
}
