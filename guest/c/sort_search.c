/* Tests qsort with comparators (ints, strings, structs) and bsearch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_int_desc(const void *a, const void *b) { return cmp_int(b, a); }

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct person {
    char name[16];
    int age;
    double score;
};

/* by age ascending, then score descending, then name */
static int cmp_person(const void *a, const void *b)
{
    const struct person *p = a, *q = b;
    if (p->age != q->age) return p->age < q->age ? -1 : 1;
    if (p->score != q->score) return p->score > q->score ? -1 : 1;
    return strcmp(p->name, q->name);
}

static unsigned seed = 99;
static unsigned lcg(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

#define N 3000

int main(void)
{
    static int a[N];
    for (int i = 0; i < N; i++) a[i] = (int)(lcg() % 20001) - 10000;
    qsort(a, N, sizeof a[0], cmp_int);
    int sorted = 1;
    long sum = 0;
    for (int i = 0; i < N; i++) {
        sum += a[i];
        if (i && a[i - 1] > a[i]) sorted = 0;
    }
    printf("ints: sorted=%d min=%d max=%d median=%d sum=%ld\n", sorted, a[0], a[N - 1], a[N / 2], sum);

    int found = 0, missing = 0;
    for (int k = -10000; k <= 10000; k += 37) {
        int *p = bsearch(&k, a, N, sizeof a[0], cmp_int);
        if (p) {
            found++;
            if (*p != k) return 9;
        } else {
            missing++;
        }
    }
    printf("bsearch: found=%d missing=%d\n", found, missing);

    qsort(a, N, sizeof a[0], cmp_int_desc);
    printf("desc: first=%d %d %d last=%d\n", a[0], a[1], a[2], a[N - 1]);

    /* strings */
    const char *words[] = {
        "pear", "apple", "fig", "banana", "cherry", "date", "elderberry", "grape", "kiwi",
        "lemon", "mango", "nectarine", "orange", "papaya", "quince", "raspberry", "apple",
        "Apple", "zucchini", "", "a", "ab", "abc", "ABC", "banana split", "b",
    };
    size_t nw = sizeof words / sizeof words[0];
    qsort(words, nw, sizeof words[0], cmp_str);
    for (size_t i = 0; i < nw; i++) printf("\"%s\"%s", words[i], i + 1 < nw ? " " : "\n");
    const char *keys[] = {"kiwi", "apple", "", "zzz", "banana split", "Apple", "c"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char **p = bsearch(&keys[i], words, nw, sizeof words[0], cmp_str);
        printf("find \"%s\": %s\n", keys[i], p ? "yes" : "no");
    }

    /* structs */
    struct person people[40];
    static const char *names[] = {"ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"};
    for (int i = 0; i < 40; i++) {
        snprintf(people[i].name, sizeof people[i].name, "%s%d", names[lcg() % 8], i % 5);
        people[i].age = 20 + (int)(lcg() % 5);
        people[i].score = (double)(lcg() % 1000) / 8.0;
    }
    qsort(people, 40, sizeof people[0], cmp_person);
    for (int i = 0; i < 40; i++)
        printf("%-6s age=%d score=%.3f\n", people[i].name, people[i].age, people[i].score);
    struct person key = people[17];
    struct person *hit = bsearch(&key, people, 40, sizeof people[0], cmp_person);
    printf("bsearch person: %s at index %td\n", hit ? hit->name : "(none)", hit ? hit - people : -1);

    /* stability is not guaranteed by qsort; all ties are broken so output is deterministic. */
    return 0;
}
