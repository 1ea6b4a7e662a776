"""Hugging Face transformers' Llama, tensor-parallel by its own TP plan, checked as it ships
(issue 61; transformers 5.x, torch 2.x, CPU ranks under gloo).

The model is built from a config (no download): rank 0 saves a tiny randomly initialised
LlamaForCausalLM, every rank loads it with from_pretrained(..., distributed_config=
DistributedConfig(tp_size=world)), which applies the model's base_model_tp_plan: q/k/v/gate/up
colwise, o/down rowwise, the embedding and lm_head vocab-parallel (DTensor parameters), the norms
plain tensors every rank keeps whole. The model is float32 and computes parts of its forward in
float32 on purpose (LlamaRMSNorm, eager attention's softmax, ForCausalLMLoss's logits.float()):
the check runs those in float64 for its truth and reads the gradients the model's own dtypes give.

Every rank computes the same causal-LM loss of the same batch: by transformers' TP contract one
logical loss, judged under replicated semantics (the check says so in a note).

- lm_loss with make_inputs: correct.
- lm_loss with make_inputs_norm_allreduce: the plan overridden to sum the gradient of every
  post-attention norm over the TP mesh ("replicated_with_grad_allreduce", the style transformers
  gives Qwen3's per-head q_norm/k_norm, which see only their rank's heads) where the norm sees the
  whole hidden state on every rank: those weights' gradients are W times the truth, nothing else
  moves.
"""

import os
import tempfile

import torch
import torch.distributed as dist

VOCAB, HIDDEN, INTER, LAYERS, HEADS, SEQ, BATCH = 16, 8, 16, 1, 4, 5, 2   # heads divide W = 2 and 4


def config():  # type: ignore[no-untyped-def]
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=INTER, num_hidden_layers=LAYERS,
                       num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=32,
                       attn_implementation="eager")


def tiny_llama():  # type: ignore[no-untyped-def]
    """The model every rank (and the test's reference) starts from."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(config())


def token_ids() -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH, SEQ), generator=torch.Generator().manual_seed(1))


def _load(world: int, tp_plan=None):  # type: ignore[no-untyped-def]
    from transformers import DistributedConfig, LlamaForCausalLM

    path = os.path.join(tempfile.mkdtemp(prefix="tiny-llama-") if dist.get_rank() == 0 else "", "")
    shared = [path]
    dist.broadcast_object_list(shared, src=0)
    if dist.get_rank() == 0:
        tiny_llama().save_pretrained(shared[0])
    dist.barrier()
    return LlamaForCausalLM.from_pretrained(shared[0], distributed_config=DistributedConfig(tp_size=world,
                                                                                          tp_plan=tp_plan))


def make_inputs(rank: int, world: int) -> dict:
    return {"model": _load(world)}


def make_inputs_norm_allreduce(rank: int, world: int) -> dict:
    return {"model": _load(world, {"model.layers.*.post_attention_layernorm": "replicated_with_grad_allreduce"})}


def lm_loss(rank: int, world: int, model) -> torch.Tensor:  # type: ignore[no-untyped-def]
    ids = token_ids()
    return model(input_ids=ids, labels=ids).loss
