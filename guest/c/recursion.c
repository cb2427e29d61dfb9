/* Tests recursion: small Ackermann, Tower of Hanoi, recursive binary-tree build/walk, mutual recursion. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long ack_calls;

static unsigned long ackermann(unsigned long m, unsigned long n)
{
    ack_calls++;
    if (m == 0) return n + 1;
    if (n == 0) return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

static unsigned long hanoi_moves;
static unsigned hanoi_hash;

static void hanoi(int n, int from, int to, int via, int print)
{
    if (n == 0) return;
    hanoi(n - 1, from, via, to, print);
    hanoi_moves++;
    hanoi_hash = hanoi_hash * 31u + (unsigned)(from * 3 + to) + (unsigned)n;
    if (print) printf("move disk %d from %c to %c\n", n, 'A' + from, 'A' + to);
    hanoi(n - 1, via, to, from, print);
}

struct node {
    int key;
    struct node *left, *right;
};

static struct node *insert(struct node *t, int key)
{
    if (!t) {
        struct node *n = malloc(sizeof *n);
        if (!n) abort();
        n->key = key;
        n->left = n->right = NULL;
        return n;
    }
    if (key < t->key) t->left = insert(t->left, key);
    else if (key > t->key) t->right = insert(t->right, key);
    return t;
}

static int height(const struct node *t)
{
    if (!t) return 0;
    int l = height(t->left), r = height(t->right);
    return 1 + (l > r ? l : r);
}

static long sum_keys(const struct node *t)
{
    return t ? t->key + sum_keys(t->left) + sum_keys(t->right) : 0;
}

static int inorder_count;
static void inorder(const struct node *t, int print_limit)
{
    if (!t) return;
    inorder(t->left, print_limit);
    if (inorder_count++ < print_limit) printf(" %d", t->key);
    inorder(t->right, print_limit);
}

static void free_tree(struct node *t)
{
    if (!t) return;
    free_tree(t->left);
    free_tree(t->right);
    free(t);
}

static int is_even(unsigned n);
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }

static long long fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

static int depth_probe(int n) { return n == 0 ? 0 : 1 + depth_probe(n - 1); }

int main(void)
{
    for (unsigned long m = 0; m <= 3; m++)
        for (unsigned long n = 0; n <= (m < 3 ? 4 : 3); n++) {
            ack_calls = 0;
            unsigned long r = ackermann(m, n);
            printf("ackermann(%lu, %lu) = %lu (%lu calls)\n", m, n, r, ack_calls);
        }

    hanoi_moves = 0;
    hanoi_hash = 0;
    hanoi(3, 0, 2, 1, 1);
    printf("hanoi(3): %lu moves hash=%u\n", hanoi_moves, hanoi_hash);
    hanoi_moves = 0;
    hanoi_hash = 0;
    hanoi(14, 0, 2, 1, 0);
    printf("hanoi(14): %lu moves hash=%u\n", hanoi_moves, hanoi_hash);

    struct node *root = NULL;
    unsigned x = 12345;
    for (int i = 0; i < 2000; i++) {
        x = x * 1103515245u + 12345u;
        root = insert(root, (int)((x >> 8) % 100000));
    }
    printf("tree height=%d sum=%ld\n", height(root), sum_keys(root));
    printf("first keys:");
    inorder_count = 0;
    inorder(root, 12);
    printf("\ntree nodes=%d\n", inorder_count);
    free_tree(root);

    printf("is_even(1000)=%d is_odd(777)=%d\n", is_even(1000), is_odd(777));
    for (int i = 0; i <= 20; i += 5) printf("fact(%d)=%lld\n", i, fact(i));
    printf("depth_probe(10000)=%d\n", depth_probe(10000));
    return 0;
}
