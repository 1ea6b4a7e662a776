/* guard_test.c — cuda-emu (the in-tree EMULATION of CUDA for CI,
 * tests/cuda_emu/README.md) proves its guards:
 *  - host code that reads or writes a cudaMalloc'd pointer dies of SIGSEGV
 *    (in a forked child), with the emulation's explanation on stderr, while
 *    the same bytes move fine through cudaMemcpy;
 *  - copies whose pointers contradict their kind are refused;
 *  - the emulated NCCL refuses a host buffer ("not device memory") and takes
 *    device buffers.
 * Run under mpiexec -n 1 (the NCCL part needs MPI; the forks come before
 * MPI_Init, which does not survive a fork). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_runtime_api.h"
#include "nccl.h"

static int passed, failed;

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL: %s\n", what);
}

/* Runs touch(p) in a child with stderr captured; 1 when the child died of
 * SIGSEGV and said why. */
static int dies_of_segv(void (*touch)(volatile float *), volatile float *p)
{
    int fds[2];
    char err[1024] = "";
    if (pipe(fds) != 0)
        return 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        touch(p);
        _exit(0); /* survived: the guard did not work */
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while ((n = read(fds[0], err + got, sizeof err - 1 - got)) > 0)
        got += (size_t)n;
    err[got] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
        printf("child status %#x, stderr: %s\n", status, err);
        return 0;
    }
    return strstr(err, "cuda-emu: host code touched device memory") != NULL;
}

static void host_read(volatile float *p) { printf("read %g\n", (double)p[1]); }
static void host_write(volatile float *p) { p[2] = 1.0f; }

static void test_memory_guard(void)
{
    float host[4] = {1, 2, 3, 4}, back[4] = {0};
    float *dev = NULL;
    check(cudaMalloc((void **)&dev, sizeof host) == cudaSuccess && dev, "cudaMalloc");
    check(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess &&
              cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess &&
              memcmp(host, back, sizeof host) == 0,
          "a round trip through cudaMemcpy");
    check(dies_of_segv(host_read, dev), "a host read of device memory dies of SIGSEGV");
    check(dies_of_segv(host_write, dev), "a host write to device memory dies of SIGSEGV");
    /* kinds that contradict the pointers, and copies past an allocation */
    check(cudaMemcpy(back, dev, sizeof back, cudaMemcpyHostToDevice) == cudaErrorInvalidValue,
          "HostToDevice into host memory is refused");
    check(cudaMemcpy(dev, back, sizeof back, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue,
          "DeviceToDevice from host memory is refused");
    check(cudaMemcpy(back, dev + 1, sizeof back, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue,
          "a copy past the end of an allocation is refused");
    check(cudaGetLastError() == cudaErrorInvalidValue && cudaGetLastError() == cudaSuccess,
          "the last error is reported once");
    struct cudaPointerAttributes a;
    check(cudaPointerGetAttributes(&a, dev) == cudaSuccess && a.type == cudaMemoryTypeDevice &&
              cudaPointerGetAttributes(&a, host) == cudaSuccess &&
              a.type == cudaMemoryTypeUnregistered,
          "cudaPointerGetAttributes tells device from host");
    check(cudaFree(dev) == cudaSuccess && cudaFree(host) == cudaErrorInvalidValue,
          "cudaFree takes device allocations only");
}

static void test_nccl_refuses_host_buffers(void)
{
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    float host[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8] = {0};
    float *dev = NULL;
    check(ncclGetUniqueId(&id) == ncclSuccess && ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess,
          "ncclCommInitRank (1 rank)");
    if (!comm)
        return;
    check(ncclAllReduce(host, host, 8, ncclFloat32, ncclSum, comm, NULL) == ncclInvalidArgument,
          "ncclAllReduce refuses a host buffer");
    check(strstr(ncclGetLastError(comm), "not device memory") != NULL,
          "and says \"not device memory\"");
    cudaMalloc((void **)&dev, sizeof host);
    check(ncclGroupStart() == ncclSuccess &&
              ncclSend(host, 8, ncclFloat32, 0, comm, NULL) == ncclInvalidArgument &&
              ncclRecv(dev, 8, ncclFloat32, 0, comm, NULL) == ncclSuccess &&
              ncclGroupEnd() == ncclInvalidArgument,
          "a group with a host send buffer fails");
    check(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess &&
              ncclAllReduce(dev, dev, 8, ncclFloat32, ncclSum, comm, NULL) == ncclSuccess &&
              cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess &&
              memcmp(host, back, sizeof host) == 0,
          "ncclAllReduce takes device buffers");
    check(ncclGroupStart() == ncclSuccess &&
              ncclSend(dev, 4, ncclFloat32, 0, comm, NULL) == ncclSuccess &&
              ncclRecv(dev + 4, 4, ncclFloat32, 0, comm, NULL) == ncclSuccess &&
              ncclGroupEnd() == ncclSuccess,
          "a grouped send to itself and its recv");
    cudaFree(dev);
    /* process groups: a split of one rank is a communicator of one rank; no
     * color is no communicator; the parent's config is the only one taken */
    ncclComm_t sub = NULL, none = comm;
    int n = 0, me = -1;
    check(ncclCommSplit(comm, 7, 0, &sub, NULL) == ncclSuccess && sub &&
              ncclCommCount(sub, &n) == ncclSuccess && n == 1 &&
              ncclCommUserRank(sub, &me) == ncclSuccess && me == 0,
          "ncclCommSplit: the member's communicator");
    check(ncclCommSplit(comm, NCCL_SPLIT_NOCOLOR, 0, &none, NULL) == ncclSuccess && none == NULL,
          "ncclCommSplit: NCCL_SPLIT_NOCOLOR gets NULL");
    check(ncclCommSplit(comm, -2, 0, &none, NULL) == ncclInvalidArgument,
          "ncclCommSplit: a color below -1 is refused");
    if (sub)
        check(ncclCommDestroy(sub) == ncclSuccess, "ncclCommDestroy of the split");
    check(ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
}

int main(int argc, char **argv)
{
    /* The emulation passes a fault on to the handler that was there before it;
     * MPICH's UCX installs one when it is loaded. The plain default here, so a
     * child's death is SIGSEGV itself. */
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    test_memory_guard();
    MPI_Init(&argc, &argv);
    test_nccl_refuses_host_buffers();
    MPI_Finalize();
    printf("cuda_emu_guard: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
