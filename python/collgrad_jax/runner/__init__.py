"""collgrad_jax.runner: the C tool's cases through real JAX (--backend jax:shard_map).

The C tool exports a world's cases as IR (schema collgrad-check/ir/1, the
same document the PyTorch runner reads) and starts ONE process,
``python -m collgrad_jax.runner``, whose W devices are XLA's host devices.
Each case's program runs once as the body of a ``jax.shard_map`` over a 1-D
mesh (axis 'i'): SPMD, so the program's rank is ``lax.axis_index('i')``,
its collectives JAX's own (psum, all_gather, psum_scatter, all_to_all,
ppermute, ...) and its gradients ``jax.vjp``'s, with check_vma on
(shard_map) or off (shard_map_novma). The process writes one results file
per rank in the PyTorch runner's line format, so the C side judges, diffs
and diagnoses a JAX run as it does a PyTorch one.

What SPMD cannot say is named, never dropped: a job is skipped with the
reason (JAX has no product reduction; a value whose shape differs between
devices; a branch on the rank that only some devices take; process groups).
"""
