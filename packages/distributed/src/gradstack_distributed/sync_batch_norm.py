"""The synchronisation of nn-mini's ``SyncBatchNorm`` across the ranks of a process group
(torch's ``torch.nn.modules._functions.SyncBatchNorm``), installed into nn-mini when this
package is imported (Note [SyncBatchNorm and the distributed layer] in nn-mini's
``modules/sync_batchnorm.py``).

Note [The statistics of the whole batch]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Forward: each rank's per-channel sums and count are summed over the group (one
``all_reduce``), which gives the mean of the whole batch; then the sums of squared
deviations from that mean (a second ``all_reduce``, numerically as stable as one
process's two passes), which give the biased variance.  The output is
``(x - mean) * invstd * weight + bias``; the running statistics move with the unbiased
variance of the whole batch.  Backward, as torch's: each rank's ``sum(dy)`` and
``sum(dy * (x - mean))`` are summed over the group, so that the input's gradient is that of
one process holding the whole batch; the weight's and bias's gradients stay local (the
ranks' sums are the whole batch's: DDP averages them).
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_autograd import Function, no_grad
from gradstack_nn.modules import sync_batchnorm

from . import collectives, process_group

__all__ = ["sync_batch_norm"]


def _per_channel(t, dims):
    return t.sum(dims) if dims else t


def _shape(input):
    return [1, input.shape[1]] + [1] * (input.dim() - 2)


class _SyncBatchNorm(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, group,
                world_size):  # fmt: skip
        size = input.numel() // input.size(1)
        if size == 1 and world_size < 2:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {size}"
            )
        dims = [d for d in range(input.dim()) if d != 1]
        c = input.shape[1]
        with no_grad():
            x = input.contiguous()
            local = gt.cat([_per_channel(x, dims), gt.full((1,), float(size), dtype=x.dtype)])
            collectives.all_reduce(local, group=group)
            count = local[c].item()
            mean = local[:c] / count
            centred = x - mean.reshape(_shape(x))
            squares = _per_channel(centred * centred, dims).contiguous()
            collectives.all_reduce(squares, group=group)
            var = squares / count
            invstd = (var + eps).rsqrt()
            out = centred * invstd.reshape(_shape(x))
            if weight is not None:
                out = out * weight.reshape(_shape(x))
            if bias is not None:
                out = out + bias.reshape(_shape(x))
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
            if running_var is not None:
                unbiased = var * (count / (count - 1)) if count > 1 else var
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        ctx.save_for_backward(centred, weight, invstd)
        ctx.group, ctx.count, ctx.dims = group, count, dims
        ctx.has_bias = bias is not None
        return out

    @staticmethod
    def backward(ctx, grad_output):
        centred, weight, invstd = ctx.saved_tensors
        dims, group, count = ctx.dims, ctx.group, ctx.count
        with no_grad():
            dy = grad_output.contiguous()
            shape = _shape(dy)
            sum_dy = _per_channel(dy, dims)
            sum_dy_xmu = _per_channel(dy * centred, dims)
            grad_weight = (sum_dy_xmu * invstd) if weight is not None else None
            grad_bias = sum_dy.clone() if ctx.has_bias else None
            both = gt.cat([sum_dy, sum_dy_xmu]).contiguous()
            collectives.all_reduce(both, group=group)
            c = sum_dy.numel()
            mean_dy = (both[:c] / count).reshape(shape)
            mean_dy_xmu = (both[c:] / count).reshape(shape)
            inv = invstd.reshape(shape)
            scale = inv if weight is None else inv * weight.reshape(shape)
            grad_input = (dy - mean_dy - centred * inv * inv * mean_dy_xmu) * scale
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


class _Synchronizer:
    """What nn-mini's ``SyncBatchNorm`` calls (Note [SyncBatchNorm and the distributed
    layer])."""

    @staticmethod
    def is_initialized() -> bool:
        return process_group.is_initialized()

    @staticmethod
    def get_world_size(group) -> int:
        return process_group.get_world_size(group)

    @staticmethod
    def apply(input, weight, bias, running_mean, running_var, eps, momentum, group, world_size):
        return sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum,
                               group, world_size)  # fmt: skip


def sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum, group,
                    world_size):  # fmt: skip
    """Batch norm of ``input`` with the statistics of the whole batch across ``group``'s
    ranks (Note [The statistics of the whole batch]); every rank calls it together."""
    return _SyncBatchNorm.apply(input, weight, bias, running_mean, running_var, eps, momentum,
                                group, world_size)  # fmt: skip


sync_batchnorm.register_synchronizer(_Synchronizer())
