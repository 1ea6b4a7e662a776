/* gpu_module.c — see gpu_module.h. Built only with the GPU path (HAVE_CUDA).
 * The handle and the last error are this file's process-wide state: the
 * module is loaded once and never unloaded (its CUDA and NCCL state would
 * not survive a dlclose). */
#ifdef HAVE_CUDA

#include "gpu_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "status.h"

#ifndef CG_GPU_MODULE_BUILD
#define CG_GPU_MODULE_BUILD "" /* the build tree's module (CMakeLists.txt) */
#endif
#ifndef CG_EXE_TO_GPU_MODULE
#define CG_EXE_TO_GPU_MODULE "../lib/collgrad-check/" CG_GPU_MODULE_FILE
#endif

static void *module;     /* dlopen handle, NULL until loaded */
static cg_status error;  /* why the last load or lookup failed */

const char *cg_gpu_module_error(void) { return error.msg; }
bool cg_gpu_module_loaded(void) { return module != NULL; }

/* The executable's directory into dir (with a trailing '/'), or "" when
 * /proc/self/exe cannot be read. */
static void exe_dir(char *dir, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", dir, len - 1);
    dir[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
}

static void *load(void)
{
    if (module)
        return module;
    const char *env = getenv("COLLGRAD_GPU_MODULE");
    char dir[PATH_MAX], beside[PATH_MAX + 64], installed[PATH_MAX + 256];
    exe_dir(dir, sizeof dir);
    snprintf(beside, sizeof beside, "%s%s", dir, CG_GPU_MODULE_FILE);
    snprintf(installed, sizeof installed, "%s%s", dir, CG_EXE_TO_GPU_MODULE);
    const char *env_only[] = {env};
    const char *search[] = {beside, installed, CG_GPU_MODULE_BUILD};
    const char **paths = env && *env ? env_only : search;
    size_t npaths = env && *env ? 1 : sizeof search / sizeof *search;
    for (size_t i = 0; i < npaths; i++) {
        if (!paths[i][0] || access(paths[i], F_OK) != 0)
            continue;
        module = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!module)
            cg_error(&error, "cannot load the GPU module %s: %s", paths[i], dlerror());
        return module;
    }
    if (env && *env)
        cg_error(&error, "the GPU module %s (COLLGRAD_GPU_MODULE) does not exist", env);
    else
        cg_error(&error, "the GPU module %s is not beside the executable (%s) nor in %s nor at %s; "
                 "set COLLGRAD_GPU_MODULE to its path",
                 CG_GPU_MODULE_FILE, dir, installed, CG_GPU_MODULE_BUILD[0] ? CG_GPU_MODULE_BUILD : "-");
    return NULL;
}

const void *cg_gpu_module_table(const char *entry, int version)
{
    void *m = load();
    if (!m)
        return NULL;
    const void *(*fn)(void) = NULL;
    void *sym = dlsym(m, entry);
    memcpy(&fn, &sym, sizeof fn); /* ISO C: no cast from object to function pointer */
    const int *table = fn ? fn() : NULL;
    if (!table)
        cg_error(&error, "the GPU module has no %s (%s)", entry,
                 fn ? "it returned NULL" : "missing symbol");
    else if (*table != version)
        cg_error(&error, "the GPU module's %s table is version %d, this collgrad-check needs %d "
                 "(rebuild %s with the tool)", entry, *table, version, CG_GPU_MODULE_FILE);
    else
        return table;
    return NULL;
}

#endif
