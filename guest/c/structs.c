/* Tests struct copies: large structs passed and returned by value, arrays of structs assigned. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct small {
    int a;
    int b;
};

struct mixed { /* returned in rax + xmm0 */
    long n;
    double d;
};

struct big {
    uint64_t id;
    double vals[8];
    char name[29];
    unsigned char flags;
    short pad;
    int matrix[4][4];
};

struct nested {
    struct small s[3];
    struct big b;
    float f;
};

static struct small make_small(int a, int b) { return (struct small){a, b}; }

static struct mixed make_mixed(long n) { return (struct mixed){n, (double)n / 4.0}; }

__attribute__((noinline)) static struct big make_big(uint64_t id)
{
    struct big b;
    memset(&b, 0, sizeof b);
    b.id = id;
    for (int i = 0; i < 8; i++) b.vals[i] = (double)id * 0.5 + i;
    snprintf(b.name, sizeof b.name, "big-%" PRIu64, id);
    b.flags = (unsigned char)(id * 3);
    b.pad = (short)-id;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) b.matrix[i][j] = (int)(id + (uint64_t)(i * 4 + j));
    return b;
}

__attribute__((noinline)) static struct big transpose(struct big b)
{
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            int t = b.matrix[i][j];
            b.matrix[i][j] = b.matrix[j][i];
            b.matrix[j][i] = t;
        }
    b.vals[0] = -b.vals[0];
    b.name[0] = 'B';
    return b; /* caller's copy must be unchanged */
}

__attribute__((noinline)) static uint64_t digest_big(struct big b)
{
    uint64_t h = b.id;
    for (int i = 0; i < 8; i++) h = h * 31 + (uint64_t)(int64_t)(b.vals[i] * 16.0);
    for (const char *p = b.name; *p; p++) h = h * 131 + (unsigned char)*p;
    h = h * 7 + b.flags;
    h = h * 7 + (uint64_t)(int64_t)b.pad;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) h = h * 17 + (uint64_t)(int64_t)b.matrix[i][j];
    return h;
}

__attribute__((noinline)) static struct nested build_nested(struct small x, struct big b, float f)
{
    struct nested n;
    for (int i = 0; i < 3; i++) n.s[i] = make_small(x.a + i, x.b - i);
    n.b = b;
    n.f = f;
    return n;
}

static struct small add_small(struct small p, struct small q)
{
    return (struct small){p.a + q.a, p.b + q.b};
}

int main(void)
{
    struct big a = make_big(7);
    struct big t = transpose(a);
    printf("a: id=%" PRIu64 " name=%s vals0=%.2f m[0][3]=%d m[3][0]=%d digest=%016" PRIx64 "\n",
           a.id, a.name, a.vals[0], a.matrix[0][3], a.matrix[3][0], digest_big(a));
    printf("t: id=%" PRIu64 " name=%s vals0=%.2f m[0][3]=%d m[3][0]=%d digest=%016" PRIx64 "\n",
           t.id, t.name, t.vals[0], t.matrix[0][3], t.matrix[3][0], digest_big(t));

    struct big arr[10], copy[10];
    for (int i = 0; i < 10; i++) arr[i] = make_big((uint64_t)i * 1000 + 1);
    for (int i = 0; i < 10; i++) copy[9 - i] = arr[i];
    uint64_t h = 0;
    for (int i = 0; i < 10; i++) h ^= digest_big(copy[i]) * (uint64_t)(i + 1);
    printf("array copy digest=%016" PRIx64 " first=%s last=%s\n", h, copy[0].name, copy[9].name);

    /* whole-array assignment through a wrapping struct */
    struct wrap {
        struct big items[4];
    } w1, w2;
    for (int i = 0; i < 4; i++) w1.items[i] = make_big((uint64_t)i + 100);
    w2 = w1;
    w1.items[2].id = 0;
    printf("wrap: w2.items[2].id=%" PRIu64 " w1.items[2].id=%" PRIu64 " eq0=%d\n", w2.items[2].id,
           w1.items[2].id, memcmp(&w1.items[0], &w2.items[0], sizeof(struct big)) == 0);

    struct nested n = build_nested(make_small(10, 20), t, 1.25f);
    printf("nested: s={%d,%d},{%d,%d},{%d,%d} b.name=%s f=%g digest=%016" PRIx64 "\n", n.s[0].a,
           n.s[0].b, n.s[1].a, n.s[1].b, n.s[2].a, n.s[2].b, n.b.name, (double)n.f,
           digest_big(n.b));

    struct small acc = {0, 0};
    for (int i = 0; i < 100; i++) acc = add_small(acc, make_small(i, -2 * i));
    printf("small acc={%d,%d}\n", acc.a, acc.b);

    struct mixed m = make_mixed(-13);
    printf("mixed n=%ld d=%.17g\n", m.n, m.d);

    printf("sizeof big=%zu nested=%zu\n", sizeof(struct big), sizeof(struct nested));
    return 0;
}
