/* rules_local_math.h — the per-element formulas rule sets apply on their own
 * rank, written once for both executors: the host loops of rules_local.c and
 * the kernels of cuda/rules_local.cu include this same file, so the CPU
 * reference and the device twin cannot drift apart. */
#ifndef CG_RULES_LOCAL_MATH_H
#define CG_RULES_LOCAL_MATH_H

#if defined(__CUDACC__) || defined(CG_CUDA_EMU)
#define CG_HD __host__ __device__
#else
#define CG_HD
#endif

/* Π_{k≠i} x_k from this rank's v = x_i, the world's count of zeros and the
 * world's product of its nonzero values: exact with zeros, never dividing by
 * a zero x_i. */
static inline CG_HD double cg_prod_of_others(double v, double zeros, double nonzero_prod)
{
    if (zeros == 0.0)
        return nonzero_prod / v;
    return (zeros == 1.0 && v == 0.0) ? nonzero_prod : 0.0;
}

/* This rank's share of a max/min gradient: 1/#ties where it attains the
 * extremum m, else 0 (like torch.amax). */
static inline CG_HD double cg_tie_share(double x, double m, double ties)
{
    return x == m ? 1.0 / ties : 0.0;
}

/* torch_xla's AllReduce.backward for REDUCE_MUL: g * out / in, 0 at in == 0. */
static inline CG_HD double cg_xla_prod_grad(double g, double in, double out)
{
    return in != 0.0 ? g * (out / in) : 0.0;
}

/* torch_xla's AllReduce.backward for REDUCE_MIN/MAX: g where in == out. */
static inline CG_HD double cg_xla_extremum_grad(double g, double in, double out)
{
    return in == out ? g : 0.0;
}

#endif
