/* device.c — see device.h. */
#include "device.h"

#include <stdio.h>
#include <string.h>

#include "cuda_ops.h"
#include "plugin.h"
#include "rules.h"

cg_device cg_device_of(const cg_options *o)
{
    if (o->device)
        return strcmp(o->device, "cuda") == 0 ? CG_DEVICE_CUDA : CG_DEVICE_CPU;
    return strcmp(o->transport, "nccl") == 0 ? CG_DEVICE_CUDA : CG_DEVICE_CPU;
}

const char *cg_device_name(cg_device d)
{
    return d == CG_DEVICE_CUDA ? "cuda" : "cpu";
}

/* The transport's capability flags without opening it (no MPI needed). */
static int transport_caps(const char *name, unsigned *caps, cg_status *st)
{
    const cg_transport_ops *ops = collgrad_builtin_transport(name);
    if (!ops && strcmp(name, "nccl") == 0)
        return cg_nccl_missing(st);
    if (!ops && cg_is_plugin_path(name))
        ops = cg_transport_load(name, st);
    else if (!ops)
        return cg_error(st, "unknown transport '%s'", name);
    if (!ops)
        return -1;
    *caps = ops->caps;
    return 0;
}

/* No device, or a build without CUDA: nothing can run. */
static int device_available(cg_status *st)
{
#ifndef HAVE_CUDA
    cg_error(st, "--device cuda: this collgrad-check was built without CUDA");
    return -1;
#else
    int n = 0;
    if (cg_cuda_device_count(&n) == 0 && n > 0)
        return 0;
    cg_error(st, "--device cuda: no CUDA device is visible (%s)",
             n == 0 && cg_cuda_last_error()[0] ? cg_cuda_last_error() : "0 devices");
    return -1;
#endif
}

int cg_device_precheck(const cg_options *o, cg_status *st)
{
    if (cg_device_of(o) != CG_DEVICE_CUDA)
        return 0;
    unsigned caps = 0;
    if (transport_caps(o->transport, &caps, st) != 0)
        return CG_EXIT_INFRA;
    if (!(caps & CGT_CAP_CUDA)) {
        cg_error(st, "--device cuda: transport '%s' takes host buffers only; use --transport nccl (or a plugin "
                 "with CGT_CAP_CUDA), or --device cpu", o->transport);
        return CG_EXIT_USAGE;
    }
    if (o->rules && cg_is_plugin_path(o->rules)) {
        cg_error(st, "--device cuda: rule-set plugins receive host tensors (rules ABI %d); run %s with --device cpu",
                 CG_RULES_ABI_VERSION, o->rules);
        return CG_EXIT_USAGE;
    }
    if (o->inject && strncmp(o->inject, "hang:", 5) != 0 && strncmp(o->inject, "exit:", 5) != 0) {
        cg_error(st, "--device cuda: --inject %s rewrites host buffers; use --device cpu",
                 o->inject);
        return CG_EXIT_USAGE;
    }
    /* nccl's own pre-check (plugin_check.h) says this in its words */
    if (strcmp(o->transport, "nccl") != 0 && device_available(st) != 0)
        return CG_EXIT_INFRA;
    return 0;
}
