/* test_parser.c — the case-language parser: the IR it builds, the exact
 * error for each class of malformed input, printing round trips, and
 * robustness against every prefix and random mutations of a valid file.
 *
 * Inputs are always handed over in a buffer of exactly their length (not
 * NUL-terminated), so ASan catches any read past the end. */
#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#ifndef CG_TEST_DIR
#error "CG_TEST_DIR must name the tests directory"
#endif
#define MALFORMED_DIR CG_TEST_DIR "/malformed/"
#define REGRESSIONS_DIR CG_TEST_DIR "/fuzz/regressions/"

static char err[CG_ERR_LEN];

static cg_case *parse_len(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, text, len);
    cg_status st = CG_STATUS_OK;
    cg_case *c = cg_parse_case("t.case", copy, len, &st);
    snprintf(err, sizeof err, "%s", st.msg);
    free(copy);
    return c;
}

/* cg_load_case with its message in err */
static cg_case *load(const char *path, const cg_limits *lim)
{
    cg_status st = CG_STATUS_OK;
    cg_case *c = cg_load_case(path, lim, &st);
    snprintf(err, sizeof err, "%s", st.msg);
    return c;
}

static cg_case *parse(const char *text) { return parse_len(text, strlen(text)); }

static cg_case *parse_ok(const char *text)
{
    cg_case *c = parse(text);
    ck_assert_msg(c != NULL, "unexpected error: %s", err);
    return c;
}

static void assert_error_len(const char *text, size_t len, const char *message)
{
    cg_case *c = parse_len(text, len);
    ck_assert_ptr_null(c);
    ck_assert_str_eq(err, message);
}

static void assert_error(const char *text, const char *message) { assert_error_len(text, strlen(text), message); }

static void assert_pos(const cg_srcpos *pos, int line, int col)
{
    ck_assert_int_eq(pos->line, line);
    ck_assert_int_eq(pos->col, col);
    ck_assert_str_eq(pos->file, "t.case");
}

static const cg_expr *assert_call(const cg_expr *e, const char *name, int nargs)
{
    ck_assert_int_eq(e->kind, CG_E_CALL);
    ck_assert_str_eq(e->name, name);
    ck_assert_int_eq(e->nargs, nargs);
    return e;
}

static const cg_expr *assert_binary(const cg_expr *e, cg_opcode op, int line, int col)
{
    ck_assert_int_eq(e->kind, CG_E_BINARY);
    ck_assert_int_eq(e->op, op);
    assert_pos(&e->pos, line, col);
    return e;
}

static void assert_num(const cg_expr *e, double v)
{
    ck_assert_int_eq(e->kind, CG_E_NUM);
    ck_assert_double_eq(e->num, v);
}

static void assert_name(const cg_expr *e, cg_expr_kind kind, const char *name)
{
    ck_assert_int_eq(e->kind, kind);
    ck_assert_str_eq(e->name, name);
}

static unsigned long long fnv1a64(const char *s)
{
    unsigned long long h = 14695981039346656037ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static const char allreduce_case[] =
    "case    allreduce_product_scaled\n"
    "source  pytorch/pytorch#58005 (PRODUCT follow-up); shared/seeds/002_fe13a50d78b2a57b.txt\n"
    "world   2\n"
    "dtype   f64\n"
    "\n"
    "x  = param(ones(1))\n"
    "xx = x * (rank + 2)\n"
    "p  = all_reduce(xx, prod)\n"
    "backward(p * (rank + 2))\n"
    "\n"
    "expect grad(x) per_rank        [30] [30]\n"
    "expect grad(x) replicated      undefined\n"
    "expect grad(x) rules=torch-nn  [12] [18]\n"
    "expect grad(x) rules=c10d      [4]  [9]\n";

static const char rpc_case[] = "case rpc\n"
                               "world 2\n"
                               "on 0 {\n"
                               "  t1 = param(rand(3, 3))\n"
                               "  send(t1, 1)\n"
                               "}\n"
                               "on 1 {\n"
                               "  a = recv(0)\n"
                               "  send(a * 2, 0)\n"
                               "}\n"
                               "on 0 {\n"
                               "  t3 = recv(1)\n"
                               "  backward(sum(t3))\n"
                               "}\n"
                               "expect grad(t1) on 0 = 2 * ones(3, 3)\n";

/* ---- valid cases --------------------------------------------------------- */

static void assert_expect_lists(const cg_expect *x, double a, double b)
{
    ck_assert_int_eq(x->nlists, 2);
    ck_assert_int_eq(x->list_len[0], 1);
    ck_assert_int_eq(x->list_len[1], 1);
    ck_assert_double_eq(x->lists[0][0], a);
    ck_assert_double_eq(x->lists[1][0], b);
}

START_TEST(test_full_case_header_and_program)
{
    cg_case *c = parse_ok(allreduce_case);
    ck_assert_str_eq(c->name, "allreduce_product_scaled");
    ck_assert_str_eq(c->file, "t.case");
    ck_assert_str_eq(c->source, "pytorch/pytorch#58005 (PRODUCT follow-up); shared/seeds/002_fe13a50d78b2a57b.txt");
    ck_assert_int_eq(c->nworlds, 1);
    ck_assert_int_eq(c->worlds[0], 2);
    ck_assert_int_eq(c->dtype, CG_F64);
    ck_assert(!c->has_seed);
    ck_assert(c->seed == fnv1a64("allreduce_product_scaled"));
    ck_assert_double_eq(c->rtol, 0);
    ck_assert_int_eq(c->nstmts, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(c->stmts[i]->index, i);

    const cg_stmt *s = c->stmts[0];
    ck_assert_int_eq(s->kind, CG_S_ASSIGN);
    ck_assert_int_eq(s->nnames, 1);
    ck_assert_str_eq(s->names[0], "x");
    assert_pos(&s->pos, 6, 1);
    assert_pos(&assert_call(s->expr, "param", 1)->pos, 6, 6);
    assert_num(assert_call(s->expr->args[0], "ones", 1)->args[0], 1);

    const cg_expr *mul = assert_binary(c->stmts[1]->expr, CG_OP_MUL, 7, 8);
    assert_name(mul->args[0], CG_E_NAME, "x");
    assert_pos(&mul->args[0]->pos, 7, 6);
    const cg_expr *add = assert_binary(mul->args[1], CG_OP_ADD, 7, 16);
    ck_assert_int_eq(add->args[0]->kind, CG_E_RANK);
    assert_pos(&add->args[0]->pos, 7, 11);
    assert_num(add->args[1], 2);

    const cg_expr *ar = assert_call(c->stmts[2]->expr, "all_reduce", 2);
    assert_name(ar->args[1], CG_E_WORD, "prod");
    ck_assert(ar->kwnames == NULL || ar->kwnames[1] == NULL);

    s = c->stmts[3];
    ck_assert_int_eq(s->kind, CG_S_CALL);
    assert_pos(&s->pos, 9, 1);
    assert_binary(assert_call(s->expr, "backward", 1)->args[0], CG_OP_MUL, 9, 12);
    cg_case_free(c);
}
END_TEST

START_TEST(test_full_case_expectations)
{
    cg_case *c = parse_ok(allreduce_case);
    ck_assert_int_eq(c->nexpects, 4);
    const cg_expect *x = c->expects[0];
    ck_assert_int_eq(x->kind, CG_X_GRAD);
    assert_pos(&x->pos, 11, 1);
    ck_assert_str_eq(x->tensor, "x");
    ck_assert_int_eq(x->semantics, CG_SEM_PER_RANK);
    ck_assert_ptr_null(x->rules);
    ck_assert_int_eq(x->nranks, 0);
    assert_expect_lists(x, 30, 30);

    x = c->expects[1];
    ck_assert_int_eq(x->semantics, CG_SEM_REPLICATED);
    ck_assert(x->undefined);
    ck_assert_int_eq(x->nlists, 0);
    ck_assert_ptr_null(x->expr);

    x = c->expects[2];
    ck_assert_str_eq(x->rules, "torch-nn");
    ck_assert_int_eq(x->semantics, CG_SEM_PER_RANK);
    assert_expect_lists(x, 12, 18);
    ck_assert_str_eq(c->expects[3]->rules, "c10d");
    assert_expect_lists(c->expects[3], 4, 9);

    ck_assert_str_eq(cg_semantics_name(CG_SEM_PER_RANK), "per_rank");
    ck_assert_str_eq(cg_semantics_name(CG_SEM_REPLICATED), "replicated");
    ck_assert_str_eq(cg_semantics_name(CG_SEM_OWN_LOSS), "own_loss");
    cg_case_free(c);
}
END_TEST

START_TEST(test_on_blocks)
{
    cg_case *c = parse_ok(rpc_case);
    ck_assert_int_eq(c->nstmts, 3);
    const int body_kinds[3][2] = {{CG_S_ASSIGN, CG_S_CALL}, {CG_S_ASSIGN, CG_S_CALL}, {CG_S_ASSIGN, CG_S_CALL}};
    for (int i = 0; i < 3; i++) {
        const cg_stmt *s = c->stmts[i];
        ck_assert_int_eq(s->kind, CG_S_ON);
        ck_assert_int_eq(s->index, 3 * i); /* pre-order: the block, then its body */
        ck_assert_int_eq(s->nranks, 1);
        assert_num(s->ranks[0], i == 1);
        ck_assert_int_eq(s->nbody, 2);
        for (int j = 0; j < 2; j++) {
            ck_assert_int_eq(s->body[j]->kind, body_kinds[i][j]);
            ck_assert_int_eq(s->body[j]->index, 3 * i + 1 + j);
        }
    }
    assert_call(c->stmts[1]->body[1]->expr, "send", 2);
    assert_pos(&c->stmts[2]->body[1]->pos, 13, 3);
    const cg_expect *x = c->expects[0];
    ck_assert_int_eq(x->nranks, 1);
    ck_assert_int_eq(x->ranks[0], 0);
    assert_binary(x->expr, CG_OP_MUL, 15, 26);
    cg_case_free(c);

    c = parse_ok("case one_line\nworld 3\non 1, 2 { a = ones(1); b = a * 2; }\nx = ones(2)\non rank == 0 {\n}\n");
    ck_assert_int_eq(c->stmts[0]->nranks, 2);
    ck_assert_int_eq(c->stmts[0]->nbody, 2);
    ck_assert_int_eq(c->stmts[2]->nbody, 0);
    assert_binary(c->stmts[2]->ranks[0], CG_OP_EQ, 5, 9);
    cg_case_free(c);
}
END_TEST

START_TEST(test_headers)
{
    cg_case *c = parse_ok("worlds 1..4, 8  # sizes\ncase h\ndtype bf16\ntolerance 1e-3\nseed 18446744073709551615\n"
                          "source   a # not a comment  \t\n");
    ck_assert_int_eq(c->nworlds, 5);
    const int want[] = {1, 2, 3, 4, 8};
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(c->worlds[i], want[i]);
    ck_assert_int_eq(c->dtype, CG_BF16);
    ck_assert_double_eq(c->rtol, 1e-3);
    ck_assert_double_eq(c->atol, 1e-3);
    ck_assert(c->has_seed);
    ck_assert(c->seed == 18446744073709551615ULL);
    ck_assert_str_eq(c->source, "a # not a comment");
    cg_case_free(c);

    c = parse_ok("case t2\nworlds 4, 2..3, 3\ntolerance atol=0.5 rtol=2\n");
    ck_assert_int_eq(c->nworlds, 3);
    ck_assert_int_eq(c->worlds[0], 2);
    ck_assert_int_eq(c->worlds[2], 4);
    ck_assert_double_eq(c->rtol, 2);
    ck_assert_double_eq(c->atol, 0.5);
    ck_assert(!cg_jax_spelling_set(&c->jax));
    cg_case_free(c);

    /* the jax line: any order, each key once; a usual word is the default */
    c = parse_ok("case j\nworld 2\njax backward=in_body all_gather=varying loss=replicated\n");
    ck_assert(c->jax.backward_in_body && c->jax.loss_replicated && !c->jax.all_gather_invarying);
    cg_case_free(c);

    /* CRLF line ends; non-ASCII text is fine in comments, source and strings. */
    c = parse_ok("case crlf\r\nworld 2 # caf\xc3\xa9\r\nsource na\xc3\xafve\r\nx = ones(1); y = x\r\n"
                 "expect error \"\xe2\x9c\x97\"\r\n");
    ck_assert_str_eq(c->source, "na\xc3\xafve");
    ck_assert_int_eq(c->nstmts, 2);
    ck_assert_str_eq(c->expects[0]->message, "\xe2\x9c\x97");
    cg_case_free(c);
}
END_TEST

START_TEST(test_precedence)
{
    cg_case *c = parse_ok("case p\nworld 1\n"
                          "a = -2**2\n"
                          "b = a + a * 3\n"
                          "c = a ? b : a ? 1 : 2\n"
                          "d = a ? b ? 1 : 2 : 3\n"
                          "e = 2 ** 3 ** 2\n"
                          "f = !a && b || c < 1\n"
                          "g = (a - b) - c @ d % 2\n");
    const cg_expr *e = c->stmts[0]->expr; /* -(2**2) */
    ck_assert_int_eq(e->kind, CG_E_UNARY);
    ck_assert_int_eq(e->op, CG_OP_NEG);
    assert_pos(&e->pos, 3, 5);
    assert_binary(e->args[0], CG_OP_POW, 3, 7);

    e = assert_binary(c->stmts[1]->expr, CG_OP_ADD, 4, 7);
    assert_binary(e->args[1], CG_OP_MUL, 4, 11);

    e = c->stmts[2]->expr; /* a ? b : (a ? 1 : 2) */
    ck_assert_int_eq(e->kind, CG_E_TERNARY);
    assert_pos(&e->pos, 5, 5);
    ck_assert_int_eq(e->args[2]->kind, CG_E_TERNARY);
    assert_pos(&e->args[2]->pos, 5, 13);

    e = c->stmts[3]->expr; /* a ? (b ? 1 : 2) : 3 */
    ck_assert_int_eq(e->args[1]->kind, CG_E_TERNARY);
    assert_num(e->args[2], 3);

    e = assert_binary(c->stmts[4]->expr, CG_OP_POW, 7, 7); /* 2 ** (3 ** 2) */
    assert_binary(e->args[1], CG_OP_POW, 7, 12);

    e = assert_binary(c->stmts[5]->expr, CG_OP_OR, 8, 13);
    assert_binary(e->args[0], CG_OP_AND, 8, 8);
    ck_assert_int_eq(e->args[0]->args[0]->op, CG_OP_NOT);
    assert_pos(&e->args[0]->args[0]->pos, 8, 5);
    assert_binary(e->args[1], CG_OP_LT, 8, 18);

    e = assert_binary(c->stmts[6]->expr, CG_OP_SUB, 9, 13); /* (a-b) - ((c@d)%2) */
    assert_binary(e->args[0], CG_OP_SUB, 9, 8);
    assert_binary(assert_binary(e->args[1], CG_OP_MOD, 9, 21)->args[0], CG_OP_MATMUL, 9, 17);
    cg_case_free(c);
}
END_TEST

START_TEST(test_tuple_assign_and_continuation)
{
    cg_case *c = parse_ok("case t\nworld 2\nw = ones(4, 2)\nq, k, v = cat(w, w,\n    w, axis=0)  # split\n"
                          "m = [[1, 2],\n     [3, 4]\n]\nr = sum(m\n  )\n");
    const cg_stmt *s = c->stmts[1];
    ck_assert_int_eq(s->nnames, 3);
    ck_assert_str_eq(s->names[0], "q");
    ck_assert_str_eq(s->names[2], "v");
    const cg_expr *cat = assert_call(s->expr, "cat", 4);
    ck_assert_str_eq(cat->kwnames[3], "axis");
    ck_assert_ptr_null(cat->kwnames[0]);
    const cg_expr *m = c->stmts[2]->expr;
    ck_assert_int_eq(m->kind, CG_E_LIST);
    ck_assert_int_eq(m->nargs, 2);
    ck_assert_int_eq(m->args[1]->kind, CG_E_LIST);
    assert_pos(&m->args[1]->pos, 7, 6);
    ck_assert_int_eq(c->nstmts, 4);
    cg_case_free(c);
}
END_TEST

START_TEST(test_words_keywords_and_indexing)
{
    cg_case *c = parse_ok("case w\nworld 2\nx = ones(4)\n"
                          "a = all_reduce(x, prod)\n"
                          "b = reduce(x, 0, op=max) + reduce(x, root=1)\n"
                          "c = x[1] + x[1:3] + x[:2] + x[rank:]\n");
    assert_name(c->stmts[1]->expr->args[1], CG_E_WORD, "prod");
    const cg_expr *r = assert_call(c->stmts[2]->expr->args[0], "reduce", 3);
    ck_assert_str_eq(r->kwnames[2], "op");
    assert_name(r->args[2], CG_E_WORD, "max");
    ck_assert_str_eq(c->stmts[2]->expr->args[1]->kwnames[1], "root");

    const cg_expr *sum = c->stmts[3]->expr, *ix[4];
    for (int i = 3; i >= 1; i--, sum = sum->args[0])
        ix[i] = sum->args[1];
    ix[0] = sum;
    ck_assert(!ix[0]->is_slice);
    ck_assert_int_eq(ix[0]->nargs, 2);
    assert_pos(&ix[0]->pos, 6, 5);
    assert_num(ix[0]->args[1], 1);
    ck_assert(ix[1]->is_slice);
    assert_num(ix[1]->args[2], 3);
    ck_assert_ptr_null(ix[2]->args[1]);
    assert_num(ix[2]->args[2], 2);
    ck_assert_int_eq(ix[3]->args[1]->kind, CG_E_RANK);
    ck_assert_ptr_null(ix[3]->args[2]);
    cg_case_free(c);
}
END_TEST

/* The docs write rank blocks on one line: the last statement may close
 * its block (issue 11 item 15). */
START_TEST(test_one_line_blocks)
{
    cg_case *c = parse_ok("case b\nworld 2\nx = ones(1)\non 0 { y = x }\non 1 { z = x; w = z }\non 0 {\n}\n");
    ck_assert_int_eq(c->nstmts, 4);
    ck_assert_int_eq(c->stmts[1]->nbody, 1);
    ck_assert_int_eq(c->stmts[2]->nbody, 2);
    ck_assert_int_eq(c->stmts[3]->nbody, 0);
    cg_case_free(c);
}
END_TEST

static char *print_to_string(const cg_case *c);

START_TEST(test_expectation_forms)
{
    cg_case *c = parse_ok("case e\nworlds 2..3\n"
                          "expect value(y) on 1, 2 rules=torch-nn [[1, -2], [3e-1, .5]] [0]\n"
                          "expect grad(y) own_loss = y * rank\n"
                          "expect error rules=c10d \"bad \\\"op\\\" \\\\ here\"\n"
                          "expect grad(y) rules=torch-nn@2.4 = 0\n"
                          "y = param(ones(2, 2))\n");
    const cg_expect *x = c->expects[0];
    ck_assert_int_eq(x->kind, CG_X_VALUE);
    ck_assert_int_eq(x->nranks, 2);
    ck_assert_int_eq(x->ranks[1], 2);
    ck_assert_str_eq(x->rules, "torch-nn");
    ck_assert_int_eq(x->nlists, 2); /* one per rank after on */
    ck_assert_int_eq(x->list_len[0], 4);
    ck_assert_double_eq(x->lists[0][1], -2);
    ck_assert_double_eq(x->lists[0][3], 0.5);
    ck_assert_int_eq(c->expects[1]->semantics, CG_SEM_OWN_LOSS);
    ck_assert_str_eq(c->expects[2]->message, "bad \"op\" \\ here");
    ck_assert_str_eq(c->expects[3]->rules, "torch-nn@2.4"); /* family@version */
    ck_assert(cg_rules_name_covers("torch-nn", "torch-nn@2.4") &&
              cg_rules_name_covers("torch-nn@2.4", "torch-nn@2.4"));
    ck_assert(!cg_rules_name_covers("torch-nn@2.4", "torch-nn@1.13") &&
              !cg_rules_name_covers("torch", "torch-nn@2.4") &&
              !cg_rules_name_covers("torch-nn@2.4", "torch-nn") &&
              !cg_rules_name_covers(NULL, "torch-nn"));
    ck_assert_str_eq(c->expects[2]->rules, "c10d");
    cg_case_free(c);

    /* the phase a framework raises in (issue 39 item 1), and its absence */
    c = parse_ok("case r\nworld 2\ny = ones(1)\nexpect raises rules=torch-nn at backward\n"
                 "expect raises rules=c10d at forward \"Gloo\"\nexpect raises rules=torch-nn\n");
    ck_assert(c->expects[0]->raises);
    ck_assert_int_eq(c->expects[0]->phase, CG_PHASE_BACKWARD);
    ck_assert_str_eq(c->expects[0]->message, "");
    ck_assert_int_eq(c->expects[1]->phase, CG_PHASE_FORWARD);
    ck_assert_str_eq(c->expects[1]->message, "Gloo");
    ck_assert_int_eq(c->expects[2]->phase, CG_PHASE_ANY);
    char *printed = print_to_string(c);
    ck_assert_ptr_nonnull(strstr(printed, "expect raises rules=torch-nn at backward\n"));
    ck_assert_ptr_nonnull(strstr(printed, "expect raises rules=c10d at forward \"Gloo\"\n"));
    free(printed);
    cg_case_free(c);
    /* an error text's phase: the worker's "backward of ..." and a PyTorch rank's "at backward" */
    ck_assert_int_eq(cg_error_phase("t.case:3:1: backward of gather(root 1): the framework raises"),
                     CG_PHASE_BACKWARD);
    ck_assert_int_eq(cg_error_phase("t.case:3:1: RuntimeError at backward: x"), CG_PHASE_BACKWARD);
    ck_assert_int_eq(cg_error_phase("t.case:3:1: the framework raises at gather: x"), CG_PHASE_FORWARD);

    c = parse_ok("case gather\nworld 2\ny = ones(3)\nexpect value(y) [1, 1, 2] [ ]\n");
    x = c->expects[0];
    ck_assert_int_eq(x->nlists, 2);
    ck_assert_int_eq(x->list_len[1], 0);
    ck_assert_ptr_nonnull(x->lists[1]);
    cg_case_free(c);
}
END_TEST

/* ---- printing ------------------------------------------------------------ */

static char *print_to_string(const cg_case *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    cg_case_print(f, c);
    ck_assert_int_eq(fclose(f), 0);
    return buf;
}

/* Every operator and form the printer has to parenthesize (named, not only
 * in roundtrip_inputs, so fuzz_seeds can use it in a constant initializer). */
static const char operators_case[] =
    "case p.1\nworlds 1..4, 8, 10, 11\ndtype f32\ntolerance rtol=1e-05 atol=0.25\nseed 7\n"
    "jax all_gather=invarying\n"
    "a = -2**2 + (-2)**2 - 2**-1 + 2**3**2 + (2**3)**2\n"
    "b = (a < 1) == (a >= 2) ? (a ? 1 : 2) : a ? 3 : 4\n"
    "c, d = [[0.1, 2], [3, 4]][0][1:] @ -a[:1] % 3 / (a - (a - a))\n"
    "e = !(a && a || a) || !a && a\n"
    "f = sum(a, axis=0) + reduce(a, 0, op=min) + all_reduce(a, avg)\n"
    "zero_grad()\n"
    "expect error \"q\\\"\\\\\"\n"
    "expect grad(a) on 1 replicated rules=x [1, -2.5, 1e+20]\n";

static const char *const roundtrip_inputs[] = {allreduce_case, rpc_case, operators_case};

START_TEST(test_print_roundtrip)
{
    cg_case *c = parse_ok(roundtrip_inputs[_i]);
    char *first = print_to_string(c);
    cg_case_free(c);
    c = parse_ok(first);
    char *second = print_to_string(c);
    cg_case_free(c);
    ck_assert_str_eq(first, second);
    free(first);
    free(second);
}
END_TEST

START_TEST(test_print_minimal_parentheses)
{
    cg_case *c = parse_ok(roundtrip_inputs[2]);
    char *text = print_to_string(c);
    ck_assert_ptr_nonnull(strstr(text, "a = -2**2 + (-2)**2 - 2**-1 + 2**3**2 + (2**3)**2\n"));
    ck_assert_ptr_nonnull(strstr(text, "b = (a < 1) == (a >= 2) ? (a ? 1 : 2) : a ? 3 : 4\n"));
    ck_assert_ptr_nonnull(strstr(text, "worlds 1..4, 8, 10, 11\n"));
    ck_assert_ptr_nonnull(strstr(text, "expect grad(a) on 1 replicated rules=x [1, -2.5, 1e+20]\n"));
    free(text);
    cg_case_free(c);
}
END_TEST

/* ---- malformed files: one per class, the exact message ------------------- */

typedef struct malformed {
    const char *file;
    const char *message; /* after "DIR/malformed/FILE:" */
} malformed;

static const malformed malformed_files[] = {
    {"unknown_op.case", "5:5: expected a known function, got 'al_reduce'"},
    {"undefined_name.case", "4:10: expected a defined tensor name, got 'y'"},
    {"unclosed_paren.case", "3:19: expected ')' to close '(' at 3:11, got end of line"},
    {"stray_paren.case", "3:19: expected end of line, got unmatched ')'"},
    {"world_zero.case", "2:7: expected a world size in 1..64, got 0"},
    {"world_too_big.case", "2:11: expected a world size in 1..64, got 65"},
    {"world_missing.case", "1:1: expected 'world N' or 'worlds ...', got end of file"},
    {"missing_value.case", "4:4: expected an expression, got end of line"},
    {"trailing_garbage.case", "3:20: expected end of line, got 'foo'"},
    {"empty.case", "1:1: expected 'case NAME', got end of file"},
    {"binary_nul.case", "1:1: expected a statement, got byte 0x00"},
    {"binary_high.case", "4:5: expected an expression, got byte 0xE9"},
    {"list_count.case", "5:16: expected 2 value lists (one per rank) for world 2, got 3"},
    {"unterminated_string.case",
     "4:25: expected '\"' to close the string at 4:14, got end of line"},
    {"nested_on.case", "5:3: expected a statement inside an on-block (they do not nest), got 'on'"},
    {"statement_in_expr.case", "4:5: expected an expression, got the statement 'backward'"},
    {"duplicate_case.case", "3:1: expected a single 'case' line, got a second one (first at 1:1)"},
    {"unknown_semantics.case",
     "5:16: expected a semantics word (per_rank, replicated or own_loss), got 'per_ranks'"},
    {"rules_path.case",
     "5:22: expected a rule-set name (letters, digits, '-', '_', then @VERSION of digits "
     "and dots); a case file cannot load a plugin, pass it with --rules FILE.so, got "
     "'/tmp/evil.so'"},
    {"rules_version_so.case",
     "5:22: expected a rule-set name (letters, digits, '-', '_', then @VERSION of "
     "digits and dots); a case file cannot load a plugin, pass it with --rules "
     "FILE.so, got 'torch-nn@1.so'"},
};

START_TEST(test_malformed_file)
{
    const malformed *m = &malformed_files[_i];
    char path[256], want[CG_ERR_LEN];
    snprintf(path, sizeof path, "%s%s", MALFORMED_DIR, m->file);
    snprintf(want, sizeof want, "%s:%s", path, m->message);
    cg_case *c = load(path, NULL);
    ck_assert_ptr_null(c);
    ck_assert_str_eq(err, want);
}
END_TEST

/* ---- other errors, inline ------------------------------------------------- */

typedef struct inline_error {
    const char *text;
    const char *message;
} inline_error;

#define HDR "case a\nworld 2\nx = ones(1)\n"

static const inline_error inline_errors[] = {
    {HDR "y = exp(x, 2)\n", "t.case:4:5: expected 1 argument for 'exp', got 2"},
    {HDR "y = reshape(x)\n", "t.case:4:5: expected 2..5 arguments for 'reshape', got 1"},
    {HDR "y = ones(1, axis=0)\n",
     "t.case:4:13: expected no keyword arguments for 'ones', got 'axis'"},
    {HDR "y = sum(x, axis=0, axis=1)\n", "t.case:4:20: expected 'axis' once, got it twice"},
    {HDR "y = sum(x, op=sum)\n", "t.case:4:12: expected a keyword of 'sum' (axis), got 'op'"},
    {HDR "y = reduce(x, 0, root=1)\n",
     "t.case:4:18: expected 'root' by position or by keyword, got both"},
    {HDR "y = cat(x, axis=0, x)\n",
     "t.case:4:20: expected a keyword argument (positional ones come first), got 'x'"},
    {HDR "y = cat(axis=0)\n", "t.case:4:5: expected 1 positional argument for 'cat', got 0"},
    {HDR "y = reduce(root=0, op=max)\n",
     "t.case:4:5: expected 1 positional argument for 'reduce', got 0"},
    {HDR "y = x < x < x\n",
     "t.case:4:11: expected a single comparison (they do not chain), got '<'"},
    {HDR "rank = x\n", "t.case:4:1: expected a tensor name, got the reserved word 'rank'"},
    {HDR "y, y = x\n", "t.case:4:4: expected distinct names, got 'y' twice"},
    {HDR "x = x + y\n", "t.case:4:9: expected a defined tensor name, got 'y'"},
    {HDR "y = y\n", "t.case:4:5: expected a defined tensor name, got 'y'"},
    {HDR "expect grad(x) undefined\n",
     "t.case:4:16: expected values ([...] or = EXPR; undefined needs replicated), got 'undefined'"},
    {HDR "expect value(x) on 2 [1]\n",
     "t.case:4:20: expected a rank below 2 (the largest world), got 2"},
    {HDR "expect value(x) on 0 [1] [1]\n",
     "t.case:4:22: expected 1 value list (one per rank after 'on'), got 2"},
    {HDR "expect value(x) on 0, 1 [1]\n",
     "t.case:4:25: expected 2 value lists (one per rank after 'on'), got 1"},
    {HDR "expect grad(z) [1] [1]\n", "t.case:4:13: expected a defined tensor name, got 'z'"},
    {HDR "expect value(x) = x + z\n", "t.case:4:23: expected a defined tensor name, got 'z'"},
    {HDR "expect grad(x) [1, ] [1]\n", "t.case:4:20: expected a number, got ']'"},
    {HDR "expect bogus(x)\n",
     "t.case:4:8: expected grad(NAME), value(NAME), error or raises, got 'bogus'"},
    {HDR "expect error rules=c10d\n", "t.case:4:24: expected a quoted message, got end of line"},
    {HDR "expect raises rules=c10d at sideways\n",
     "t.case:4:29: expected forward or backward after 'at', got 'sideways'"},
    {HDR "expect error \"a\\nb\"\n", "t.case:4:17: expected '\\\"' or '\\\\' after '\\', got 'n'"},
    {"case a\nworlds 1..3\nx = ones(1)\nexpect value(x) [1] [1] [1] [1]\n",
     "t.case:4:17: expected 1..3 value lists (one per rank) for worlds 1..3, got 4"},
    {"case a\nworld 1\nx = ones(1)\nexpect value(x) [1] [2]\n",
     "t.case:4:17: expected 1 value list (one per rank) for world 1, got 2"},
    {"world 2\nx = ones(1)\n", "t.case:1:1: expected 'case NAME', got end of file"},
    {"case a\ndtype f8\nworld 2\n",
     "t.case:2:7: expected a dtype (f32, f64, bf16 or f16), got 'f8'"},
    {"case a\nworld 2\nworlds 3\n",
     "t.case:3:1: expected a single 'world' or 'worlds' line, got a second one (first at 2:1)"},
    {"case a\nworlds 4..2\n", "t.case:2:8: expected a world range A..B with A <= B, got 4..2"},
    {"case a\nsource x\001y\nworld 2\n", "t.case:2:9: expected source text, got byte 0x01"},
    {"case\nworld 2\n", "t.case:1:5: expected a case name, got end of line"},
    {"case a b\nworld 2\n", "t.case:1:8: expected end of line, got 'b'"},
    {"case a\nworld 2\ntolerance -1\n",
     "t.case:3:11: expected a tolerance (NUM, or rtol=NUM and/or atol=NUM), got '-'"},
    {"case a\nworld 2\njax\n", "t.case:3:4: expected a jax key (all_gather, loss or backward), got end of line"},
    {"case a\nworld 2\njax loss=replicated loss=varying\n", "t.case:3:21: expected 'loss' once, got it twice"},
    {"case a\nworld 2\njax loss=invarying\n",
     "t.case:3:10: expected loss=varying or loss=replicated, got 'invarying'"},
    {"case a\nworld 2\njax loss\n", "t.case:3:9: expected '=', got end of line"},
    {"case a\nworld 2\njax loss=varying\njax loss=varying\n",
     "t.case:4:1: expected a single 'jax' line, got a second one (first at 3:1)"},
    {"case a\nworld 2\nseed 18446744073709551616\n",
     "t.case:3:6: expected a seed in 0..18446744073709551615, got 18446744073709551616"},
    {"case a\nworld 2\nall_reduce(x)\n",
     "t.case:3:1: expected a statement call (backward, zero_grad or send), got 'all_reduce'"},
    {"case a\nworld 2\nbakward(x)\n", "t.case:3:1: expected a known function, got 'bakward'"},
    {HDR "x + 1\n", "t.case:4:3: expected '=' or ',', got '+'"},
    {HDR "on 0\n{\n}\n", "t.case:4:5: expected ',' or '{', got end of line"},
    {HDR "on 0 {\ny = x\n", "t.case:6:1: expected '}' to close '{' at 4:6, got end of file"},
    {HDR "on 0 { y = x ) }\n", "t.case:4:14: expected end of line, got unmatched ')'"},
    {HDR "on 0 {\n  world 3\n}\n",
     "t.case:5:3: expected a statement inside an on-block, got 'world'"},
    {HDR "}\n", "t.case:4:1: expected a statement, got unmatched '}'"},
    {HDR "y = (x]\n", "t.case:4:7: expected ')' to close '(' at 4:5, got ']'"},
    {HDR "y = [x, x\n", "t.case:4:10: expected ']' to close '[' at 4:5, got end of line"},
    {HDR "y = 1e999\n", "t.case:4:5: expected a finite number, got 1e999"},
    {HDR "y = exp\n", "t.case:4:8: expected '(' after 'exp', got end of line"},
    {HDR "y = 1 ? 2\n", "t.case:4:10: expected ':' to match '?' at 4:7, got end of line"},
    {HDR "y = \"s\"\n", "t.case:4:5: expected an expression, got a string"},
    {HDR "y = x +   # dangling\n", "t.case:4:11: expected an expression, got end of line"},
    {HDR "y = x[1:2:3]\n", "t.case:4:10: expected ']' to close '[' at 4:6, got ':'"},
    {HDR "y = x\t$\n", "t.case:4:7: expected end of line, got '$'"},
    {HDR "y = x # a\001b\n", "t.case:4:10: expected end of line, got byte 0x01"},
    {HDR "y\xc3\xa9 = x\n", "t.case:4:2: expected '=' or ',', got byte 0xC3"},
    {HDR "expect error \"a\001\"\n", "t.case:4:16: expected string text, got byte 0x01"},
    {HDR "backward()\n", "t.case:4:1: expected 1 argument for 'backward', got 0"},
    {HDR "backward(x, axis=0)\n",
     "t.case:4:13: expected no keyword arguments for 'backward', got 'axis'"},
};

START_TEST(test_inline_error)
{
    assert_error(inline_errors[_i].text, inline_errors[_i].message);
}
END_TEST

/* "case a\nworld 1\nx = " + open * count + "1" + close * count. */
static size_t nested_text(char *text, size_t size, const char *open, const char *close, int count)
{
    size_t n = (size_t)snprintf(text, size, "case a\nworld 1\nx = ");
    for (int i = 0; i < count; i++)
        n += (size_t)snprintf(text + n, size - n, "%s", open);
    n += (size_t)snprintf(text + n, size - n, "1");
    for (int i = 0; i < count; i++)
        n += (size_t)snprintf(text + n, size - n, "%s", close);
    return n;
}

START_TEST(test_nesting_cap)
{
    static char text[8192];
    size_t n = nested_text(text, sizeof text, "(", ")", 150);
    cg_case *c = parse_len(text, n);
    ck_assert_msg(c != NULL, "%s", err);
    cg_case_free(c);
    n = nested_text(text, sizeof text, "(", ")", 500);
    assert_error_len(text, n, "t.case:3:205: expected at most 200 nested expressions, got more");
    n = nested_text(text, sizeof text, "-", "", 500);
    assert_error_len(text, n, "t.case:3:204: expected at most 200 nested expressions, got more");
    n = nested_text(text, sizeof text, "", "+1", 500);
    assert_error_len(text, n, "t.case:3:404: expected at most 200 nested expressions, got more");
    n = nested_text(text, sizeof text, "sum(", ")", 500);
    assert_error_len(text, n, "t.case:3:805: expected at most 200 nested expressions, got more");
}
END_TEST

START_TEST(test_load_errors)
{
    ck_assert_ptr_null(load(MALFORMED_DIR "no-such-file.case", NULL));
    ck_assert_str_eq(err, MALFORMED_DIR "no-such-file.case: cannot read: No such file or directory");
    ck_assert_ptr_null(load(MALFORMED_DIR, NULL));
    ck_assert_str_eq(err, MALFORMED_DIR ": expected a case file, got a directory");
    /* never blocks on a device, never reads past the limit */
    ck_assert_ptr_null(load("/dev/zero", NULL));
    ck_assert_str_eq(err, "/dev/zero: expected a case file, got a character device");
    ck_assert_ptr_null(load(MALFORMED_DIR "unknown_op.case", &(cg_limits){.case_bytes = 10}));
    ck_assert_str_eq(err, MALFORMED_DIR "unknown_op.case: expected a case file of at most 10 bytes (the limit; "
                          "raise it with --max-case-bytes), got more");
}
END_TEST

/* The error never overruns the status (a file name longer than the message
 * is cut, NUL-terminated), and a NULL status is fine. */
START_TEST(test_error_length_bounded)
{
    const char *text = HDR "y = al_reduce(x)\n";
    char file[700];
    memset(file, 'f', sizeof file - 1);
    file[sizeof file - 1] = '\0';
    cg_status st;
    memset(&st, '#', sizeof st);
    st = CG_STATUS_OK;
    ck_assert_ptr_null(cg_parse_case(file, text, strlen(text), &st));
    ck_assert_int_eq(st.code, CG_EXIT_USAGE);
    ck_assert_uint_eq(strlen(st.msg), sizeof st.msg - 1);
    ck_assert_int_eq(strncmp(st.msg, file, sizeof st.msg - 1), 0);
    ck_assert_ptr_null(cg_parse_case("t.case", text, strlen(text), NULL));
    st = CG_STATUS_OK;
    ck_assert_ptr_null(cg_parse_case("t.case", NULL, 0, &st));
    ck_assert_str_eq(st.msg, "t.case:1:1: expected 'case NAME', got end of file");
}
END_TEST

/* ---- robustness ----------------------------------------------------------- */

static const char *const fuzz_seeds[] = {allreduce_case, rpc_case, operators_case};

/* Only that it returns: a case or an error, never a crash (run under ASan). */
static void parse_any(const char *text, size_t len)
{
    cg_case *c = parse_len(text, len);
    if (c) {
        char *printed = print_to_string(c);
        free(printed);
        cg_case_free(c);
    } else {
        ck_assert_msg(strncmp(err, "t.case:", 7) == 0, "odd error: %s", err);
    }
}

START_TEST(test_every_prefix)
{
    const char *text = fuzz_seeds[_i];
    for (size_t len = 0; len <= strlen(text); len++)
        parse_any(text, len);
}
END_TEST

START_TEST(test_random_mutations)
{
    static const char interesting[] = "()[]{},;:=+-*/%@!<>?#\"\n\t .0123456789e_azAZ";
    uint64_t state = 0x9E3779B97F4A7C15ULL + (uint64_t)_i;
    const char *seed = fuzz_seeds[_i % 3];
    size_t seed_len = strlen(seed);
    char buf[2048];
    for (int round = 0; round < 1500; round++) {
        memcpy(buf, seed, seed_len);
        size_t len = seed_len;
        int edits = 1 + round % 6;
        for (int k = 0; k < edits; k++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL; /* Knuth's MMIX LCG */
            uint32_t r = (uint32_t)(state >> 33);
            size_t at = r % (len ? len : 1);
            switch ((r >> 24) % 4) {
            case 0: buf[at] = (char)(r >> 12); break; /* any byte */
            case 1: buf[at] = interesting[(r >> 12) % (sizeof interesting - 1)]; break;
            case 2: if (len) { memmove(buf + at, buf + at + 1, len - at - 1); len--; } break;
            default:
                if (len < sizeof buf) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = interesting[(r >> 12) % (sizeof interesting - 1)];
                    len++;
                }
            }
        }
        parse_any(buf, len);
    }
}
END_TEST

/* Inputs the fuzzer (scripts/fuzz.sh) once crashed on, replayed as they are. */
START_TEST(test_fuzz_regressions)
{
    DIR *d = opendir(REGRESSIONS_DIR);
    ck_assert_msg(d != NULL, "cannot open %s", REGRESSIONS_DIR);
    int replayed = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s%s", REGRESSIONS_DIR, de->d_name);
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        static char buf[1 << 16];
        size_t len = fread(buf, 1, sizeof buf, f);
        ck_assert_int_eq(ferror(f), 0);
        fclose(f);
        parse_any(buf, len);
        replayed++;
    }
    closedir(d);
    ck_assert_int_gt(replayed, 0);
}
END_TEST

static Suite *parser_suite(void)
{
    Suite *s = suite_create("parser");
    TCase *valid = tcase_create("valid");
    tcase_add_test(valid, test_full_case_header_and_program);
    tcase_add_test(valid, test_full_case_expectations);
    tcase_add_test(valid, test_on_blocks);
    tcase_add_test(valid, test_headers);
    tcase_add_test(valid, test_precedence);
    tcase_add_test(valid, test_tuple_assign_and_continuation);
    tcase_add_test(valid, test_words_keywords_and_indexing);
    tcase_add_test(valid, test_expectation_forms);
    tcase_add_test(valid, test_one_line_blocks);
    tcase_add_loop_test(valid, test_print_roundtrip, 0, 3);
    tcase_add_test(valid, test_print_minimal_parentheses);
    suite_add_tcase(s, valid);

    TCase *errors = tcase_create("errors");
    tcase_add_loop_test(errors, test_malformed_file, 0, (int)(sizeof malformed_files / sizeof malformed_files[0]));
    tcase_add_loop_test(errors, test_inline_error, 0, (int)(sizeof inline_errors / sizeof inline_errors[0]));
    tcase_add_test(errors, test_nesting_cap);
    tcase_add_test(errors, test_load_errors);
    tcase_add_test(errors, test_error_length_bounded);
    suite_add_tcase(s, errors);

    TCase *robust = tcase_create("robustness");
    tcase_set_timeout(robust, 120);
    tcase_add_loop_test(robust, test_every_prefix, 0, 3);
    tcase_add_loop_test(robust, test_random_mutations, 0, 6);
    tcase_add_test(robust, test_fuzz_regressions);
    suite_add_tcase(s, robust);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(parser_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
