/* bad_abi.c — a transport plugin built for the old ABI 1 (an entry per
 * collective, before process groups added split): collgrad-check must refuse
 * it before calling any entry and say what to change (exit 3, "transport ABI
 * version 1, this collgrad-check needs 3: rebuild it against this
 * collgrad_transport.h (ABI 3 replaces the entry per collective with one
 * entry, call, ..."). Only the version matters; the table is otherwise
 * empty, which the tool would refuse too, but later. */
#include "collgrad_transport.h"

static const cg_transport_ops bad_abi_ops = {
    .abi_version = 1,
    .name = "bad-abi",
    .version = "example (wrong ABI version)",
    .caps = CGT_CAP_HOST,
};

const cg_transport_ops *collgrad_transport(void);
const cg_transport_ops *collgrad_transport(void) { return &bad_abi_ops; }
