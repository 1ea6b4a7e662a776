"""torchtitan's Llama 3, parallelized by its own parallelize_llama, checked as it ships (issue 61;
torchtitan 0.3.0, torch 2.x, CPU ranks under gloo with cpu_for_cuda=True: torchtitan asks for a
"cuda" device mesh wherever it finds no accelerator).

The model is torchtitan's Llama3Model built from a config shrunk from its debug model (the same
blocks: fused QKV, ComplexRoPE with its complex64 cache, RMSNorm, SwiGLU), with the causal
ScaledDotProductAttention backend: torchtitan 0.3.0's language-model backends (flex, varlen) have
no backward on CPU. Built on the meta device and parallelized as torchtitan's trainer does
(set_llama3_sharding_config, ParallelDims, parallelize_llama: its TP plan, and FSDP over the
data-parallel ranks), then given
the logical weights of full_weights() slice by slice (distribute_tensor), as a checkpoint load
does; the test's single-process reference uses the full ones.

- lm_loss (make_inputs: TP over every rank, by the sharding torchtitan's trainer sets on the
  config, set_llama3_sharding_config; FSDP on a one-rank dimension): the logits a DTensor
  sharded over the vocabulary, made whole (full_tensor) for the cross entropy on every rank:
  one logical loss by DTensor's contract. Correct.
- step (make_inputs_fsdp: FSDP over every rank, each rank its own batch): the training step as
  torchtitan's trainer runs it: FSDP's gradient division off (disable_fsdp_gradient_division),
  the loss this rank's summed cross entropy over the global token count, backward, that loss
  returned; the ranks' losses add up to the global mean (reduction "sum"). Correct.
- step_over_world (make_inputs_fsdp): the same step dividing its loss by the world again before
  backward, as if FSDP still averaged (a loss normalised twice): x 1/W on every parameter.
"""

from functools import partial

import torch

DIM, VOCAB, HEADS, LAYERS, BATCH, SEQ = 16, 32, 4, 2, 2, 8


def config():  # type: ignore[no-untyped-def]
    from torchtitan.models.common import ComplexRoPE, Embedding, Linear, RMSNorm
    from torchtitan.models.common.attention import ScaledDotProductAttention
    from torchtitan.models.common.config_utils import make_ffn_config, make_gqa_config
    from torchtitan.models.llama3 import Llama3Model, Llama3TransformerBlock

    linear = {"weight": partial(torch.nn.init.trunc_normal_, std=0.2), "bias": torch.nn.init.zeros_}
    norm = {"weight": torch.nn.init.ones_}

    def block():  # type: ignore[no-untyped-def]
        rope = ComplexRoPE.Config(dim=DIM // HEADS, max_seq_len=4 * SEQ, theta=500000, scaling="llama")
        return Llama3TransformerBlock.Config(
            attention_norm=RMSNorm.Config(normalized_shape=DIM, param_init=norm),
            ffn_norm=RMSNorm.Config(normalized_shape=DIM, param_init=norm),
            attention=make_gqa_config(dim=DIM, n_heads=HEADS, wqkv_param_init=linear, wo_param_init=linear,
                                      fuse_qkv=True, inner_attention=ScaledDotProductAttention.Config(), rope=rope),
            feed_forward=make_ffn_config(dim=DIM, hidden_dim=2 * DIM, w1_param_init=linear, w2w3_param_init=linear))

    return Llama3Model.Config(
        dim=DIM, vocab_size=VOCAB,
        tok_embeddings=Embedding.Config(num_embeddings=VOCAB, embedding_dim=DIM,
                                        param_init={"weight": partial(torch.nn.init.normal_, std=1.0)}),
        norm=RMSNorm.Config(normalized_shape=DIM, param_init=norm),
        lm_head=Linear.Config(in_features=DIM, out_features=VOCAB, param_init=linear),
        layers=[block() for _ in range(LAYERS)])


def full_weights() -> dict:
    """The logical parameters: the model built whole on one process, seed 0."""
    torch.manual_seed(0)
    model = config().build()
    with torch.no_grad():
        model.init_weights()
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def token_ids(rank: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH, SEQ), generator=torch.Generator().manual_seed(1 + rank))


def parallelized(world: int, tp: int, dp_shard: int):  # type: ignore[no-untyped-def]
    from torch.distributed.tensor import distribute_tensor
    from torchtitan.config import CompileConfig, ParallelismConfig, TrainingConfig
    from torchtitan.distributed import ParallelDims
    from torchtitan.models.llama3 import parallelize_llama
    from torchtitan.models.llama3.sharding import set_llama3_sharding_config

    cfg = config()
    set_llama3_sharding_config(cfg, enable_sp=False)   # what the trainer's config update does
    with torch.device("meta"):
        model = cfg.build()
    parallelism = ParallelismConfig(tensor_parallel_degree=tp, data_parallel_shard_degree=dp_shard,
                                    spmd_backend="partial_dtensor")
    model = parallelize_llama(model, parallel_dims=ParallelDims.from_config(parallelism, world),
                              training=TrainingConfig(mixed_precision_param="float32"), parallelism=parallelism,
                              compile_config=CompileConfig(), ac_config=None, dump_folder="")
    model.to_empty(device="cpu")
    with torch.no_grad():
        model.init_weights()   # the buffers (RoPE's cache); the parameters come from the "checkpoint"
        full = full_weights()
        for name, p in model.named_parameters():
            p.to_local().copy_(distribute_tensor(full[name], p.device_mesh, p.placements, src_data_rank=None)
                               .to_local())
    return model


def make_inputs(rank: int, world: int) -> dict:
    return {"model": parallelized(world, tp=world, dp_shard=1)}


def lm_loss(rank: int, world: int, model) -> torch.Tensor:  # type: ignore[no-untyped-def]
    ids = token_ids()
    logits = model(ids, torch.arange(SEQ).expand(BATCH, SEQ)).full_tensor()
    return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())


def make_inputs_fsdp(rank: int, world: int) -> dict:
    return {"model": parallelized(world, tp=1, dp_shard=world)}


def global_mean_part(model, ids: torch.Tensor) -> torch.Tensor:  # type: ignore[no-untyped-def]
    """This rank's summed token losses over every rank's token count (torchtitan's
    global_valid_tokens, all-reduced over the data-parallel ranks)."""
    import torch.distributed as dist

    positions = torch.arange(SEQ).expand(BATCH, SEQ)
    logits = model(ids, positions)
    tokens = torch.tensor(float(ids[:, 1:].numel()))
    dist.all_reduce(tokens)
    return torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten(),
                                             reduction="sum") / tokens


def step(rank: int, world: int, model) -> torch.Tensor:  # type: ignore[no-untyped-def]
    loss = global_mean_part(model, token_ids(rank))
    loss.backward()
    return loss


def step_over_world(rank: int, world: int, model) -> torch.Tensor:  # type: ignore[no-untyped-def]
    loss = global_mean_part(model, token_ids(rank))
    (loss / world).backward()
    return loss
