/* bad_abi.c — a transport plugin that claims ABI version 99: collgrad-check
 * must refuse it before calling any entry (exit 3, "transport ABI version 99,
 * this collgrad-check needs 1"). Only the version matters; the table is
 * otherwise empty, which the tool would refuse too, but later. */
#include "collgrad_transport.h"

static const cg_transport_ops bad_abi_ops = {
    .abi_version = 99,
    .name = "bad-abi",
    .version = "example (wrong ABI version)",
    .caps = CGT_CAP_HOST,
};

const cg_transport_ops *collgrad_transport(void);
const cg_transport_ops *collgrad_transport(void) { return &bad_abi_ops; }
