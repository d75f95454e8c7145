"""The census of torch's public names, and which of them gradstack has (``hatch run census``).

    hatch run census                          # docs/census.md from torch, gradstack and the
                                              # saved usage counts (tools/census_usage.json)
    hatch run census --scan DIR_OR_GITDIR ... # scan a corpus of torch code first, and save
                                              # its counts in tools/census_usage.json
    hatch run census --check                  # exit 1 when docs/census.md is out of date

Two figures, both written to ``docs/census.md``:

1. **The names.**  For each namespace of :data:`NAMESPACES` (``torch``, ``torch.Tensor``'s
   methods, ``torch.nn`` ...), torch 2.13's public names (Note [Which names are public]),
   each looked up at the same path under ``gradstack`` (Note [Present means the same
   path]).  A name that makes no sense without CUDA, quantization, TorchScript, sparse
   layouts ... is *out of scope*, by the first rule of :data:`RULES` that matches it: each
   rule has one reason, and the page lists every such name under its rule.

2. **The uses.**  The names a body of public torch code uses, counted by reading its ``.py``
   files, the code cells of its ``.ipynb`` notebooks and the PyTorch cells of d2l's Markdown
   chapters with :mod:`ast` (Note [What counts as a use] in ``census_scan.py``); the share
   of the in-scope uses whose name gradstack has, weighted by how often each name is used.
   The corpus is read from checkouts or from bare git directories (``git ls-tree``/
   ``cat-file`` on ``HEAD``, no network); the counts and the repositories' commits are saved in
   ``tools/census_usage.json``, so that the page is rewritten after gradstack gains names
   without the corpus at hand.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import re
import sys
import textwrap
import types
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "tools") not in sys.path:  # the uses half, beside this file
    sys.path.insert(0, str(ROOT / "tools"))

from census_scan import (  # noqa: E402
    _IMPORT_USE,
    UseCounter,  # noqa: F401  (the census' interface: the tests use it from here)
    _import,
    _torch_version,
    program_sources,  # noqa: F401  (likewise)
    resolve,
    scan,
)

DOC = ROOT / "docs" / "census.md"
USAGE = ROOT / "tools" / "census_usage.json"

# The namespaces of the census, in the page's order.  ``torch.Tensor`` stands for the
# methods and attributes of tensors.
NAMESPACES = [
    "torch",
    "torch.Tensor",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations",
    "torch.nn.utils.rnn",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.autograd",
    "torch.autograd.functional",
    "torch.autograd.graph",
    "torch.autograd.forward_ad",
    "torch.linalg",
    "torch.special",
    "torch.fft",
    "torch.distributions",
    "torch.func",
    "torch.utils.data",
    "torch.utils.checkpoint",
    "torch.testing",
    "torch.profiler",
    "torch.amp",
    "torch.distributed",
]

# Note [torch.distributed's common names]
# torch.distributed's namespace holds ~100 names, most of them c10d's machinery (stores,
# the device mesh, the rendezvous, debug levels).  The census counts the names that
# programs call to run data-parallel training and collectives: these.
DISTRIBUTED_COMMON = [
    "init_process_group", "destroy_process_group", "is_available", "is_initialized",
    "get_rank", "get_world_size", "get_backend", "new_group", "barrier", "monitored_barrier",
    "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "gather",
    "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
    "send", "recv", "isend", "irecv", "batch_isend_irecv", "P2POp",
    "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
    "ReduceOp", "Backend", "group", "GroupMember", "ProcessGroup", "Work",
    "get_process_group_ranks", "get_global_rank", "get_group_rank",
    "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_torchelastic_launched",
]  # fmt: skip


@dataclass(frozen=True)
class Rule:
    """An out-of-scope rule: the names whose qualified name matches ``pattern``."""

    key: str
    reason: str
    pattern: str

    def matches(self, qualname: str) -> bool:
        return re.search(self.pattern, qualname) is not None


# Note [The out-of-scope rules]
# Each rule says why a group of names is left out; the first rule that matches a qualified
# name (``torch.Tensor.cuda``, ``torch.nn.functional.scaled_dot_product_attention``) wins.
# A rule names what it means precisely: ``torch.trace`` is a matrix's trace, not tracing,
# so the TorchScript rule names ``jit`` and ``script``, not ``trace``.
RULES = [
    Rule(
        "private",
        "not API: torch's build flags, loader helpers, docstring fragments and typing "
        "helpers that happen to be reachable",
        r"(^|\.)_(?!_version__$)|^torch\.(TYPE_CHECKING|USE_GLOBAL_DEPS|USE_RTLD_GLOBAL_WITH_LIBTORCH|"
        r"PRIVATE_OPS|classproperty|get_file_path|prepare_multiprocessing_environment|"
        r"compiled_with_cxx11_abi|has_lapack|has_mkl|has_openmp|has_spectral|Capsule|"
        r"DeepCopyMemoTable|init_num_threads|is_anomaly_check_nan_enabled|"
        r"set_anomaly_enabled|thread_safe_generator)$|"
        r"^torch\.[\w.]+\.(Tensor|TYPE_CHECKING|common_args|common_notes|multi_dim_common|"
        r"factory_common_args|reproducibility_notes|tf32_notes|sparse_support_notes|"
        r"BroadcastingList\d|GRID_SAMPLE_\w+|assert_int_or_pair|boolean_dispatch|"
        r"EPOCH_DEPRECATION_WARNING|inf|PackedSequence_|bind|factory_kwargs)$",
    ),
    Rule(
        "cuda",
        "CUDA, cuDNN, NCCL, GPU streams and pinned memory, and the GPU-only training aids "
        "(the device RNG states): gradstack computes on the CPU only (GradScaler is in "
        "scope: programs build one whatever their device, disabled or on the CPU)",
        r"(?i:cuda|cudnn|nccl|cufft|cublas|miopen|rocm|_gpu_|cudagraph|stream)|\.Event$|"
        r"\.pin_memory$|\.is_pinned$|\.ipc_|\.nvtx|\.OutOfMemoryError$|"
        r"\.(get|set)_device_states$|\.DefaultDeviceType$|"
        r"^torch\.nn\.parallel\.(scatter|gather|replicate|parallel_apply|data_parallel|comm)"
        r"(\.|$)",
    ),
    Rule(
        "devices",
        "other accelerators and backends (MPS, XPU, HPU, MTIA, IPU, XLA, Vulkan, Maia, "
        "MKL-DNN, privateuse1): gradstack computes on the CPU only",
        r"(?i:(^|[._])(is_|to_)?(mps|xpu|hpu|mtia|ipu|xla|vulkan|metal|maia|mkldnn|"
        r"privateuse1)([._]|$))|\.is_vulkan_available$|\.get_device_module$|"
        r"\.AcceleratorError$",
    ),
    Rule(
        "quantization",
        "quantization and the low-precision formats (quantized dtypes and tensors, "
        "float8/float4 and sub-byte integer dtypes, their scaled GEMMs): a separate kind "
        "of tensor with its own kernels",
        r"(?i:quantiz)|\.q(u)?int\d|\.q_|qscheme|qparams|per_channel|per_tensor|"
        r"\.int_repr$|fbgemm|fake_quant|\.dequantize$|\.QU?Int\w*Storage$|"
        r"\.(float8_\w+|float4_\w+|u?int[1-7]|bits\w+|bit|scaled_mm|scaled_grouped_mm|"
        r"grouped_mm|ScalingType|SwizzleType)$",
    ),
    Rule(
        "jit",
        "TorchScript, FX, export, the compilers and the dispatcher's extension points "
        "(torch_function modes, custom op libraries, IR types): gradstack runs eagerly",
        r"^torch\.(jit|fx|export|compiler)(\.|$)|(?i:script)|dynamo|inductor|"
        r"\.futures(\.|$)|"
        r"^torch\.(cond|while_loop|FileCheck|ParameterDict|ModuleDict|BufferDict|fork|wait|"
        r"Future|Await|Tag|DispatchKey|DispatchKeySet|AliasDb|Argument|ArgumentSpec|"
        r"Block|CallStack|Code|CompilationUnit|CompleteArgumentSpec|ConcreteModuleType|"
        r"ConcreteModuleTypeBuilder|DeserializationStorageContext|ErrorReport|"
        r"ExcludeDispatchKeyGuard|ExecutionPlan|FatalError|FunctionSchema|Gradient|Graph|"
        r"GraphExecutorState|IODescriptor|InferredType|JITException|Node|OperatorInfo|"
        r"PyTorchFileReader|PyTorchFileWriter|SerializationStorageContext|StaticModule|"
        r"TracingState|Use|Value|\w*Type|import_ir_module\w*|merge_type_from_type_comment|"
        r"parse_ir|parse_schema|parse_type_comment|unify_type_list|sym_\w+|Sym(Int|Float|Bool)|"
        r"DisableTorchFunction\w*|autocast_(in|de)crement_nesting)$|"
        r"^torch\.testing\.FileCheck$|torch_function|torch_dispatch|\.functionalize$|"
        r"\.library(\.|$)|\.ops(\.|$)|\.classes(\.|$)",
    ),
    Rule(
        "view_copy",
        "the ``*_copy`` forms of view ops (``view_copy``, ``transpose_copy`` ...): the "
        "out-of-place variants torch keeps for functionalization by its compilers",
        r"^torch\.\w+_copy$(?<!narrow_copy)",
    ),
    Rule(
        "aten_internals",
        "aten kernels that torch exposes for its own modules and autograd (the RNN and "
        "batch-norm kernels, ``native_*``, unsafe splits, grid samplers), documented by "
        "nothing in torch's reference: programs call the nn layer or the functional form",
        r"^torch\.(native_\w+|batch_norm_(backward_elemt|backward_reduce|elemt|gather_stats|"
        r"gather_stats_with_counts|stats|update_stats)|rnn_(tanh|relu)(_cell)?|lstm(_cell)?|"
        r"gru(_cell)?|grid_sampler(_2d|_3d)?|affine_grid_generator|conv_tbc|convolution|"
        r"constant_pad_nd|embedding_renorm_|feature_dropout_?|\w+_dropout_|dropout_|"
        r"norm_except_dim|unsafe_\w+|slice_inverse|dsmm|hsmm|hash_tensor)$|"
        r"^torch\.nn\.functional\.(conv_tbc|native_channel_shuffle)$|"
        r"^torch\.Tensor\.(unsafe_\w+|slice_inverse|index|dim_order|module_load|grad_dtype|"
        r"const_data_ptr)$",
    ),
    Rule(
        "onnx",
        "ONNX export and the DLPack interchange: gradstack's arrays are numpy's",
        r"(?i:onnx|dlpack)",
    ),
    Rule(
        "sparse",
        "sparse, nested and named layouts: gradstack's tensors are dense and strided",
        r"(?i:sparse)|\.nested(\.|$)|\.is_nested$|nested_tensor|jagged|to_padded_tensor|"
        r"\.(to_dense|coalesce|is_coalesced|indices|values|crow_indices|col_indices|"
        r"ccol_indices|row_indices|smm|sspaddmm|hspmm|saddmm|spmm|dense_dim|sparse_mask|"
        r"names|rename|rename_|refine_names|align_to|align_as|has_names|name|"
        r"segment_reduce)$",
    ),
    Rule(
        "storage",
        "storage classes and raw memory (typed and untyped storages, data pointers, a "
        "file mapped as a tensor): gradstack's memory is numpy's",
        r"(?i:storage)(?!_offset$)|\.data_ptr$|\.set_$|\.from_file$|\.is_set_to$",
    ),
    Rule(
        "multiprocessing",
        "torch.multiprocessing's shared tensors and the hub: the first needs shared "
        "storages, the second the network",
        r"\.multiprocessing(\.|$)|\.hub(\.|$)|\.model_zoo(\.|$)|\.share_memory_$|"
        r"\.is_shared$",
    ),
    Rule(
        "complex32",
        "torch's half-precision complex dtype (``complex32``, ``chalf``): numpy has no "
        "complex dtype below complex64, nor does ml_dtypes (which gives gradstack "
        "bfloat16), and gradstack's storage is numpy arrays; torch's own support is "
        "experimental (it warns so) and most of its CPU kernels refuse the dtype",
        r"^torch\.(complex32|chalf)$|^torch\.Tensor\.chalf$",
    ),
    Rule(
        "observability",
        "deployment and observability machinery (the lite interpreter's loggers, monitor, "
        "vitals, aggregation types, throughput benchmarks, denormal and warning switches "
        "of the C++ core)",
        r"(?i:mobile|lite_|vital)|\.monitor(\.|$)|LoggerBase|LockingLogger|NoopLogger|"
        r"AggregationType|^torch\.(AVG|SUM)$|ThroughputBenchmark|BenchmarkConfig|"
        r"BenchmarkExecutionStats|profiler_allow_cudagraph\w*|\.set_flush_denormal$|"
        r"\.set_warn_always$|\.is_warn_always_enabled$|\.(set|get)_deterministic_debug_mode$|"
        r"\.is_deterministic_algorithms_warn_only_enabled$|ExecutionTraceObserver",
    ),
    Rule(
        "datapipes",
        "DataPipes (``IterDataPipe``, ``functional_datapipe`` ...): deprecated in torch "
        "and removed from torchdata, its successor",
        r"^torch\.utils\.data\.(\w*DataPipe|DataChunk|argument_validation|functional_datapipe|"
        r"guaranteed_datapipes_determinism|non_deterministic|runtime_validation\w*)$",
    ),
    Rule(
        "distributed_internals",
        "torch.distributed's machinery beyond the common names (stores, device meshes, "
        "rendezvous, RPC, FSDP, tensor parallel): Note [torch.distributed's common names]",
        r"^torch\.distributed\.(?!(" + "|".join(DISTRIBUTED_COMMON) + r")$)",
    ),
    Rule(
        "tensorboard",
        "TensorBoard's ``SummaryWriter``: a logging integration with another package "
        "(tensorboard), not part of the computation",
        r"^torch\.utils\.tensorboard(\.|$)",
    ),
    Rule(
        "deprecated",
        "deprecated or removed in torch 2.13: calling it raises, or it warns and forwards "
        "to a name that the census counts",
        r"^torch\.(symeig|eig|lstsq|matrix_rank|solve|chain_matmul|range|frobenius_norm|"
        r"nuclear_norm)$|^torch\.Tensor\.(symeig|eig|lstsq|solve|reinforce|volatile)$|"
        r"^torch\.nn\.init\.(uniform|normal|constant|eye|dirac|xavier_uniform|xavier_normal|"
        r"kaiming_uniform|kaiming_normal|orthogonal|sparse)$|^torch\.nn\.NLLLoss2d$|"
        r"^torch\.distributed\.reduce_op$",
    ),
]
RULES_BY_KEY = {rule.key: rule for rule in RULES}


def out_of_scope(qualname: str) -> Rule | None:
    """The first rule that puts ``qualname`` out of scope, or None when it is in scope."""
    for rule in RULES:
        if rule.matches(qualname):
            return rule
    return None


# ---------------------------------------------------------------------------------------
# The names


# Note [Which names are public]
# A namespace's public names are those of ``dir()`` without a leading underscore, that are
# not modules (a submodule is a namespace of its own), and that torch defines: a name
# imported from elsewhere (``typing.Optional``, ``math``) is left out, and so is a torch
# object imported from another torch namespace when the module declares ``__all__`` and
# does not list it (``torch.optim.lr_scheduler.Optimizer`` is ``torch.optim``'s).  Constants
# (floats, dtypes, layouts) have no ``__module__`` and are kept.  Tensor's names are
# ``dir(torch.Tensor)`` without a leading underscore.
def _defined_in_torch(obj: object) -> bool:
    module = getattr(obj, "__module__", None)
    if isinstance(obj, type | types.FunctionType | types.BuiltinFunctionType):
        return module is None or module == "torch" or module.startswith("torch.")
    if module is None or not isinstance(module, str):
        return True
    return module == "torch" or module.startswith(("torch.", "torch"))


def torch_names(namespace: str) -> list[str]:
    """torch 2.13's public names in ``namespace`` (Note [Which names are public])."""
    import torch

    if namespace == "torch.Tensor":
        return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    if namespace == "torch.distributed":
        module = _import(namespace)
        return sorted(n for n in DISTRIBUTED_COMMON if hasattr(module, n))
    module = _import(namespace)
    declared = getattr(module, "__all__", None)
    names = set()
    for name in dir(module):
        if name.startswith("_"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = getattr(module, name)
        if isinstance(obj, types.ModuleType) or not _defined_in_torch(obj):
            continue
        if declared is not None and name not in declared:
            home = getattr(obj, "__module__", None)
            if isinstance(home, str) and not home.startswith(namespace):
                continue  # another namespace's name, imported here
        names.add(name)
    for name in declared or ():
        if not name.startswith("_") and hasattr(module, name):
            if not isinstance(getattr(module, name), types.ModuleType):
                names.add(name)
    return sorted(names)


# Note [Present means the same path]
# gradstack has a torch name when the same path under ``gradstack`` resolves: attributes
# from ``gradstack`` down, importing a submodule where an attribute is not there yet (as
# ``import torch.utils.checkpoint`` would).  ``torch.Tensor.x`` is ``gradstack.Tensor.x``.
def gradstack_has(qualname: str) -> bool:
    """Whether gradstack has torch's ``qualname`` at the same path, and it is not a stub
    (Note [A stub is not present])."""
    found, obj = resolve("gradstack" + qualname[len("torch") :])
    return found and not is_stub(obj)


# Note [A stub is not present]
# A few names are defined only to say that gradstack lacks them (``linalg.qr`` raises
# NotImplementedError "not implemented in gradstack"): a program that calls one fails as if
# the name were absent, so the census counts it missing.  A stub is a Python function whose
# body (after its docstring) is one ``raise NotImplementedError``.
def is_stub(obj: object) -> bool:
    """Whether ``obj`` is a function that only raises NotImplementedError."""
    if not isinstance(obj, types.FunctionType):
        return False
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return False
    try:
        node = ast.parse(source).body[0]
    except (SyntaxError, IndexError):
        return False
    if not isinstance(node, ast.FunctionDef):
        return False
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    name = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(name, ast.Name) and name.id == "NotImplementedError"


@dataclass
class Entry:
    namespace: str
    name: str
    qualname: str
    rule: Rule | None
    present: bool


def census() -> dict[str, list[Entry]]:
    """Every namespace's names, each with its out-of-scope rule (or None) and presence."""
    table: dict[str, list[Entry]] = {}
    for namespace in NAMESPACES:
        entries = []
        for name in torch_names(namespace):
            qualname = f"{namespace}.{name}"
            entries.append(
                Entry(namespace, name, qualname, out_of_scope(qualname), gradstack_has(qualname))
            )
        table[namespace] = entries
    return table


@dataclass
class Use:
    name: str
    count: int
    rule: Rule | None
    present: bool


def weigh(usage: dict) -> list[Use]:
    """Each used name with its count, out-of-scope rule and presence in gradstack."""
    uses = []
    for name, count in usage["counts"].items():
        if name.startswith(_IMPORT_USE + "."):
            module = name[len(_IMPORT_USE) + 1 :]
            rule = out_of_scope(module)
            try:
                _import("gradstack" + module[len("torch") :])
                present = True
            except Exception:
                present = False
            uses.append(Use(f"import {module}", count, rule, present))
            continue
        uses.append(Use(name, count, out_of_scope(name), gradstack_has(name)))
    return uses


# ---------------------------------------------------------------------------------------
# The page


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def render(table: dict[str, list[Entry]], usage: dict | None) -> str:
    out = [
        "# Census of torch's names",
        "",
        "Which of torch's public names gradstack has, written by `hatch run census`",
        "(`tools/census.py`; do not edit by hand).  Two figures: the names of each",
        f"namespace of torch {_torch_version()} (from `dir()`), and the names a body of",
        "public torch code uses, weighted by how often it uses them.  A name is *present*",
        "when the same path under `gradstack` resolves (`torch.nn.functional.gelu` as",
        "`gradstack.nn.functional.gelu`, `torch.Tensor.view` as `gradstack.Tensor.view`)",
        "to something other than a stub that raises NotImplementedError.  A name that makes",
        "no sense on gradstack (CUDA, quantization, TorchScript, sparse layouts ...) is",
        "*out of scope* by the first of [the rules](#out-of-scope-rules) that matches it,",
        "and listed under it.",
        "",
    ]
    total = Counter[str]()
    rows = []
    for namespace, entries in table.items():
        in_scope = [e for e in entries if e.rule is None]
        present = sum(e.present for e in in_scope)
        out_count = len(entries) - len(in_scope)
        rows.append(
            f"| `{namespace}` | {len(entries)} | {len(in_scope)} | {present} | "
            f"{len(in_scope) - present} | {out_count} | {_pct(present, len(in_scope))} |"
        )
        total.update(names=len(entries), in_scope=len(in_scope), present=present, out=out_count)
    out += [
        "## Summary",
        "",
        f"- **By name**: gradstack has **{_pct(total['present'], total['in_scope'])}** of the"
        f" {total['in_scope']} in-scope public names",
        f"  of the {len(table)} namespaces below ({total['present']} present,"
        f" {total['in_scope'] - total['present']} missing; {total['out']} names out of scope).",
    ]
    if usage is not None:
        out += _usage_summary(usage)
    out += [
        "",
        "## The names, per namespace",
        "",
        "| namespace | names | in scope | present | missing | out of scope | present / in scope |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        f"| **all** | {total['names']} | {total['in_scope']} | {total['present']} | "
        f"{total['in_scope'] - total['present']} | {total['out']} | "
        f"**{_pct(total['present'], total['in_scope'])}** |",
        "",
        "`torch.distributed` counts its common names only (Note [torch.distributed's",
        "common names] in `tools/census.py`).",
        "",
    ]
    if usage is not None:
        out += _usage_section(usage)
    out += ["## Missing in-scope names, per namespace", ""]
    for namespace, entries in table.items():
        missing = [e.name for e in entries if e.rule is None and not e.present]
        if missing:
            out += [f"**`{namespace}`** ({len(missing)}): " + ", ".join(
                f"`{m}`" for m in missing
            ), ""]  # fmt: skip
    out += ["## Out-of-scope rules", "", "Each rule's names, across the namespaces above.", ""]
    by_rule: dict[str, list[str]] = defaultdict(list)
    for entries in table.values():
        for e in entries:
            if e.rule is not None:
                by_rule[e.rule.key].append(e.qualname)
    for rule in RULES:
        names = by_rule.get(rule.key, [])
        out += [f"### `{rule.key}`: {len(names)} names", "", rule.reason + ".", ""]
        if names:
            out += [", ".join(f"`{n}`" for n in names), ""]
    return "\n".join(out).rstrip() + "\n"


def _usage_totals(usage: dict) -> tuple[list[Use], int, int, int]:
    uses = weigh(usage)
    in_scope = [u for u in uses if u.rule is None]
    total = sum(u.count for u in in_scope)
    present = sum(u.count for u in in_scope if u.present)
    out_total = sum(u.count for u in uses if u.rule is not None)
    return uses, total, present, out_total


def _usage_summary(usage: dict) -> list[str]:
    uses, total, present, out_total = _usage_totals(usage)
    in_scope_names = [u for u in uses if u.rule is None]
    present_names = sum(u.present for u in in_scope_names)
    return [
        f"- **By usage**: gradstack has **{_pct(present, total)}** of the {total} in-scope",
        f"  uses of torch names in the scanned corpus ({present_names} of the",
        f"  {len(in_scope_names)} distinct in-scope names used; {out_total} further uses are",
        "  of out-of-scope names).  [The uses](#the-uses-weighted-by-count).",
    ]


def _usage_section(usage: dict) -> list[str]:
    uses, total, present, out_total = _usage_totals(usage)
    repos = usage["repositories"]
    out = [
        "## The uses, weighted by count",
        "",
        f"torch {usage['torch']}'s names used by {sum(r['programs'] for r in repos)} programs",
        "(`.py` files, notebooks' code cells and d2l's PyTorch cells) of these repositories,",
        "read at these commits (`hatch run census --scan <git dirs>`; Note [What counts as",
        "a use] in `tools/census_scan.py`):",
        "",
        "| repository | commit | programs | uses |",
        "|---|---|---:|---:|",
    ]
    for r in repos:
        out.append(
            f"| [{r['name']}](https://github.com/{r['name']}) | `{r['commit'][:12]}` | "
            f"{r['programs']} | {r['uses']} |"
        )
    if usage.get("note"):
        out += ["", usage["note"]]
    missing = sorted(
        (u for u in uses if u.rule is None and not u.present), key=lambda u: (-u.count, u.name)
    )
    out_of_scope_uses = sorted(
        (u for u in uses if u.rule is not None), key=lambda u: (-u.count, u.name)
    )
    out += [
        "",
        f"In-scope uses: {total}, of which gradstack has **{present}"
        f" ({_pct(present, total)})**; out-of-scope uses: {out_total}; uses of chains that",
        f"torch {usage['torch']} does not have (typos, removed names, the corpus' own",
        f"attributes on a torch object): {sum(usage['not_in_torch'].values())}.",
        "",
        f"### Missing in-scope names by usage ({len(missing)})",
        "",
        "| name | uses |",
        "|---|---:|",
        *[f"| `{u.name}` | {u.count} |" for u in missing],
        "",
        "### The most used out-of-scope names",
        "",
        "Out of scope, yet gradstack answers some of them as torch's CPU build does",
        "(`torch.cuda.is_available()` is False): the last column says which.",
        "",
        "| name | uses | rule | in gradstack |",
        "|---|---:|---|---|",
        *[f"| `{u.name}` | {u.count} | `{u.rule.key}` | {'yes' if u.present else ''} |"
          for u in out_of_scope_uses[:40] if u.rule is not None],
        "",
    ]  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scan",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="checkouts or bare git directories of torch code to count the uses of "
        f"(saved to {USAGE.relative_to(ROOT)})",
    )
    parser.add_argument(
        "--note", default="", help="with --scan: a sentence about the corpus, for the page"
    )
    parser.add_argument("--output", type=Path, default=DOC)
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when the page is not what it would write"
    )
    args = parser.parse_args(argv)
    if args.scan:
        usage = scan(args.scan)
        usage["note"] = args.note
        USAGE.write_text(json.dumps(usage, indent=1) + "\n")
    else:
        usage = json.loads(USAGE.read_text()) if USAGE.exists() else None
    page = render(census(), usage)
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != page:
            print(f"census: {args.output} is out of date: run `hatch run census`")
            return 1
        return 0
    args.output.write_text(page)
    print(f"census: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
