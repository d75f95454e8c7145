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
   chapters with :mod:`ast` (Note [What counts as a use]); the share of the in-scope uses
   whose name gradstack has, weighted by how often each name is used.  The corpus is read
   from checkouts or from bare git directories (``git ls-tree``/``cat-file`` on ``HEAD``,
   no network); the counts and the repositories' commits are saved in
   ``tools/census_usage.json``, so that the page is rewritten after gradstack gains names
   without the corpus at hand.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import re
import subprocess
import sys
import textwrap
import types
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
        "(GradScaler, the device RNG states): gradstack computes on the CPU only",
        r"(?i:cuda|cudnn|nccl|cufft|cublas|miopen|rocm|_gpu_|cudagraph|stream)|\.Event$|"
        r"\.pin_memory$|\.is_pinned$|\.ipc_|\.nvtx|\.GradScaler$|\.OutOfMemoryError$|"
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


def _import(path: str) -> types.ModuleType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(path)


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
def resolve(path: str, root: str = "gradstack") -> tuple[bool, object]:
    """Whether ``path`` (a dotted name under ``root``) resolves, and to what."""
    parts = path.split(".")
    assert parts[0] == root, path
    obj: object = _import(root)
    for i, part in enumerate(parts[1:], start=1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = getattr(obj, part)
            continue
        except AttributeError:
            pass
        except Exception:  # a lazy attribute that fails to load is not there
            return False, None
        if not isinstance(obj, types.ModuleType):
            return False, None
        try:
            obj = _import(".".join(parts[: i + 1]))
        except Exception:
            return False, None
    return True, obj


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


# ---------------------------------------------------------------------------------------
# The uses
#
# Note [What counts as a use]
# Each occurrence, in a program's syntax tree, of a name that resolves to torch:
# - an attribute chain from a name bound by an import of torch (``torch.nn.functional.relu``,
#   ``nn.Linear``, ``F.relu`` after ``import torch.nn.functional as F``), counted once at its
#   longest chain and cut after the first object that is not a module (``torch.Tensor.add``
#   keeps one more level: a Tensor method);
# - a name bound by ``from torch... import name`` (the import line is one use, each later
#   reference another);
# - an attribute of an expression that is a tensor (Tensor methods and attributes such as
#   ``x.view``, ``x.shape``), where a light inference says it is one: the result of a
#   torch function, of a tensor method, of arithmetic or indexing on a tensor, of calling an
#   ``nn`` module instance; a name assigned one of those in the same function or at module
#   level; a parameter annotated ``Tensor``; the parameters of ``forward``.  Names that
#   only a tensor has (``unsqueeze``, ``backward``, ``requires_grad_`` ...: Tensor's names
#   that no builtin type, numpy array or nn.Module has) count on any expression;
# - ``import torch.x.y`` and ``from torch.x.y import ...`` also count one use of the module
#   ``torch.x.y`` (a namespace must be importable under gradstack at that path).
# Chains that do not exist in torch 2.13 (a typo, a removed name) are counted apart.

_IMPORT_USE = "(module)"


def _tensor_only_names() -> set[str]:
    import numpy as np
    import torch

    shared: set[str] = set()
    for kind in (list, dict, str, set, tuple, bytes, int, float, complex, object):
        shared |= set(dir(kind))
    shared |= set(dir(np.ndarray)) | set(dir(np.generic))
    shared |= set(dir(torch.nn.Module)) | set(dir(torch.optim.Optimizer))
    shared |= {"apply_", "type", "to", "cpu", "cuda", "float", "double", "half", "long", "int"}
    shared |= {"add", "sub", "mul", "div", "update", "remove", "insert", "get", "data"}
    shared |= {"grad", "size", "shape", "dtype", "device", "norm", "sum", "mean", "max", "min"}
    return {n for n in dir(torch.Tensor) if not n.startswith("_")} - shared


# torch functions whose result is not a tensor (for the inference of tensor expressions)
_NOT_TENSOR_FUNCTIONS = re.compile(
    r"^(is_\w+|set_\w+|get_\w+|manual_seed|seed|initial_seed|no_grad|enable_grad|"
    r"inference_mode|device|dtype|Size|Generator|typename|numel|save|load|compile|"
    r"use_deterministic_algorithms|finfo|iinfo|broadcast_shapes|result_type|"
    r"promote_types|can_cast|autocast)$"
)
_NOT_TENSOR_METHODS = {
    "item", "tolist", "numpy", "size", "dim", "numel", "element_size", "nelement",
    "ndimension", "is_contiguous", "data_ptr", "stride", "backward", "register_hook",
    "equal", "storage", "untyped_storage", "is_floating_point", "is_complex", "__len__",
    "type", "get_device", "storage_offset", "register_post_accumulate_grad_hook",
}  # fmt: skip
_TENSOR_ATTRIBUTES = {"grad", "data", "T", "mT", "H", "mH", "real", "imag"}
# attributes (not methods) that only a tensor has, counted on any expression
_TENSOR_ONLY_PROPERTIES = {"requires_grad", "grad_fn", "is_leaf", "retains_grad"}


class _Scope:
    def __init__(self, parent: _Scope | None):
        self.parent = parent
        self.tensors: set[str] = set()
        self.modules: set[str] = set()  # names bound to nn.Module instances

    def is_tensor(self, name: str) -> bool:
        return name in self.tensors or (self.parent is not None and self.parent.is_tensor(name))

    def is_module(self, name: str) -> bool:
        return name in self.modules or (self.parent is not None and self.parent.is_module(name))


class UseCounter:
    """Counts the torch names one program uses (Note [What counts as a use])."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.tensor_names = {n for n in dir(torch.Tensor) if not n.startswith("_")}
        self.tensor_only = _tensor_only_names()
        self.counts: Counter[str] = Counter()
        self.unknown: Counter[str] = Counter()
        self._cut_cache: dict[str, str | None] = {}

    # -- resolution against torch ------------------------------------------------------
    def cut(self, chain: str) -> str | None:
        """The torch name a dotted chain uses (Note [What counts as a use]), or None."""
        if chain in self._cut_cache:
            return self._cut_cache[chain]
        parts = chain.split(".")
        obj: object = self.torch
        result: str | None = None
        i = 1
        while i < len(parts):
            part = parts[i]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    nxt = getattr(obj, part)
            except Exception:
                nxt = None
                if isinstance(obj, types.ModuleType):
                    try:
                        nxt = _import(".".join(parts[: i + 1]))
                    except Exception:
                        nxt = None
            if nxt is None:
                self._cut_cache[chain] = None
                return None
            if not isinstance(nxt, types.ModuleType):
                end = i + 1
                if nxt is self.torch.Tensor and i + 1 < len(parts):
                    end = i + 2 if hasattr(nxt, parts[i + 1]) else end
                result = ".".join(parts[:end])
                break
            obj = nxt
            i += 1
        else:
            result = None  # a module alone: not a name
        self._cut_cache[chain] = result
        return result

    # -- reading a program -------------------------------------------------------------
    def count_source(self, sources: list[str]) -> None:
        """Count the uses in a program given as one source, or as a notebook's cells."""
        whole = "\n".join(sources)
        try:
            trees = [ast.parse(whole)]
        except (SyntaxError, ValueError):
            trees = []
            for cell in sources:
                try:
                    trees.append(ast.parse(cell))
                except (SyntaxError, ValueError):
                    continue
        aliases: dict[str, str] = {}
        foreign: set[str] = set()
        for tree in trees:
            self._collect_imports(tree, aliases, foreign)
        for tree in trees:
            _Visitor(self, aliases, foreign - set(aliases)).visit(tree)

    def _collect_imports(self, tree: ast.AST, aliases: dict[str, str], foreign: set[str]) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    foreign.add(alias.asname or alias.name.split(".")[0])
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "torch" or alias.name.startswith("torch."):
                        if alias.asname:
                            aliases[alias.asname] = alias.name
                        else:
                            aliases["torch"] = "torch"
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "torch" or node.module.startswith("torch."):
                    for alias in node.names:
                        if alias.name != "*":
                            aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def record(self, chain: str) -> str | None:
        name = self.cut(chain)
        if name is not None:
            self.counts[name] += 1
        elif chain.count(".") >= 1:
            # a chain that does not exist in torch 2.13, counted at its first missing part
            self.unknown[self._first_missing(chain)] += 1
        return name

    def _first_missing(self, chain: str) -> str:
        parts = chain.split(".")
        obj: object = self.torch
        for i, part in enumerate(parts[1:], start=1):
            if not isinstance(obj, types.ModuleType):
                return ".".join(parts[: i + 1])
            try:
                obj = getattr(obj, part)
            except Exception:
                try:
                    obj = _import(".".join(parts[: i + 1]))
                except Exception:
                    return ".".join(parts[: i + 1])
        return chain


def _chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``, or None when the base is not a plain name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def _is_module_class(obj: object) -> bool:
    import torch

    return isinstance(obj, type) and issubclass(obj, torch.nn.Module)


class _Visitor(ast.NodeVisitor):
    def __init__(self, counter: UseCounter, aliases: dict[str, str], foreign: set[str]):
        self.c = counter
        self.aliases = aliases
        self.foreign = foreign  # names imported from other packages (plt, np ...)
        self.calls: set[int] = set()  # ids of the Attribute nodes called
        self.scope = _Scope(None)

    # -- imports: the module and each imported name are uses -----------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.startswith("torch."):
                self.c.counts[f"{_IMPORT_USE}.{alias.name}"] += 1

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        if node.module != "torch" and not node.module.startswith("torch."):
            return
        if node.module != "torch":
            self.c.counts[f"{_IMPORT_USE}.{node.module}"] += 1
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{node.module}.{alias.name}"
            try:
                is_module = isinstance(_import(full), types.ModuleType)
            except Exception:
                is_module = False
            if is_module:
                self.c.counts[f"{_IMPORT_USE}.{full}"] += 1
            else:
                self.c.record(full)

    # -- scopes and the tensor inference -------------------------------------------------
    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(default)
        outer = self.scope
        self.scope = _Scope(outer)
        args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        for arg in args:
            if arg.annotation is not None:
                chain = _chain(arg.annotation)
                if chain and self._resolve_chain(chain) == "torch.Tensor":
                    self.scope.tensors.add(arg.arg)
            if node.name == "forward" and arg.arg != "self":
                self.scope.tensors.add(arg.arg)
        self._infer_assignments(node.body)
        for statement in node.body:
            self.visit(statement)
        self.scope = outer

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Module(self, node: ast.Module) -> None:
        self._infer_assignments(node.body)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        # ``self.x = nn.Linear(...)`` anywhere in the class binds ``self.x`` for the class
        outer = self.scope
        self.scope = _Scope(outer)
        for statement in ast.walk(node):
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    key = _target_key(target)
                    if key and key.startswith("self."):
                        if self._is_module_expr(statement.value):
                            self.scope.modules.add(key)
                        elif self._is_tensor_expr(statement.value):
                            self.scope.tensors.add(key)
        self.generic_visit(node)
        self.scope = outer

    def _infer_assignments(self, body: list[ast.stmt]) -> None:
        """Bind the names this body assigns tensors or nn modules to (a few passes)."""
        assigns: list[tuple[str, ast.expr]] = []

        def walk(nodes: list[ast.stmt]) -> None:
            for stmt in nodes:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    continue
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.Assign):
                        for target in sub.targets:
                            key = _target_key(target)
                            if key:
                                assigns.append((key, sub.value))
                    elif isinstance(sub, ast.AnnAssign | ast.AugAssign) and sub.value:
                        key = _target_key(sub.target)
                        if key:
                            assigns.append((key, sub.value))

        walk(body)
        for _ in range(3):
            changed = False
            for key, value in assigns:
                if key not in self.scope.tensors and self._is_tensor_expr(value):
                    self.scope.tensors.add(key)
                    changed = True
                elif key not in self.scope.modules and self._is_module_expr(value):
                    self.scope.modules.add(key)
                    changed = True
            if not changed:
                break

    def _resolve_chain(self, chain: list[str]) -> str | None:
        base = self.aliases.get(chain[0])
        if base is None:
            return None
        return ".".join([base, *chain[1:]])

    def _torch_object(self, node: ast.AST) -> object:
        chain = _chain(node)
        if not chain:
            return None
        path = self._resolve_chain(chain)
        if path is None:
            return None
        ok, obj = resolve(path, root="torch")
        return obj if ok else None

    def _is_module_expr(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return _is_module_class(self._torch_object(node.func))
        return False

    def _is_tensor_expr(self, node: ast.AST | None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return self.scope.is_tensor(node.id)
        if isinstance(node, ast.Attribute):
            key = _target_key(node)
            if key and self.scope.is_tensor(key):
                return True
            return node.attr in _TENSOR_ATTRIBUTES and self._is_tensor_expr(node.value)
        if isinstance(node, ast.Subscript):
            return self._is_tensor_expr(node.value)
        if isinstance(node, ast.BinOp):
            return self._is_tensor_expr(node.left) or self._is_tensor_expr(node.right)
        if isinstance(node, ast.UnaryOp):
            return self._is_tensor_expr(node.operand)
        if isinstance(node, ast.Call):
            func = node.func
            chain = _chain(func)
            if chain and chain[0] in self.aliases:
                path = self._resolve_chain(chain) or ""
                obj = self._torch_object(func)
                name = path.rsplit(".", 1)[-1]
                if obj is self.c.torch.Tensor or obj is self.c.torch.nn.Parameter:
                    return True
                if callable(obj) and not isinstance(obj, type):
                    return not _NOT_TENSOR_FUNCTIONS.match(name)
                return False
            if isinstance(func, ast.Attribute):
                if func.attr in self.c.tensor_names and self._is_tensor_expr(func.value):
                    return func.attr not in _NOT_TENSOR_METHODS
                key = _target_key(func)
                if key and self.scope.is_module(key):
                    return True
            if isinstance(func, ast.Name) and self.scope.is_module(func.id):
                return True
        return False

    # -- the uses ------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = _chain(node)
        if chain and chain[0] in self.aliases:
            path = self._resolve_chain(chain)
            if path is not None:
                self.c.record(path)
            return
        if node.attr in self.c.tensor_names and self._tensor_attribute(node):
            self.c.counts[f"torch.Tensor.{node.attr}"] += 1
        self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute):
            self.calls.add(id(node.func))
        self.generic_visit(node)

    def _tensor_attribute(self, node: ast.Attribute) -> bool:
        """Whether ``node`` (``<expr>.<a Tensor name>``) is a tensor's attribute."""
        if node.attr in ("values", "indices") and isinstance(node.value, ast.Call):
            return False  # the fields of torch.max/topk/sort's named tuples
        if self._is_tensor_expr(node.value):
            return True
        if node.attr not in self.c.tensor_only:
            return False
        root = node.value
        while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name) and root.id in self.foreign:
            return False  # plt.scatter, np.unique ...
        return id(node) in self.calls or node.attr in _TENSOR_ONLY_PROPERTIES

    def visit_Name(self, node: ast.Name) -> None:
        path = self.aliases.get(node.id)
        if path is not None and isinstance(node.ctx, ast.Load) and path != "torch":
            try:
                is_module = isinstance(_import(path), types.ModuleType)
            except Exception:
                is_module = False
            if not is_module:
                self.c.record(path)


def _target_key(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


# -- the corpus ---------------------------------------------------------------------------

_MAGIC = re.compile(r"^\s*[%!?]|^\s*\w+\s*=\s*!|\?\s*$")


def _clean_cell(source: str) -> str:
    """A notebook cell without IPython's magics and shell lines (each line kept, emptied)."""
    return "\n".join("" if _MAGIC.match(line) else line for line in source.splitlines())


def _notebook_cells(text: str) -> list[str]:
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError:
        return []
    cells = notebook.get("cells") or [
        cell for sheet in notebook.get("worksheets", []) for cell in sheet.get("cells", [])
    ]
    sources = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list):
            source = "".join(source)
        sources.append(_clean_cell(source))
    return sources


_D2L_BLOCK = re.compile(r"^```\{\.python \.input[^}]*\}\n(.*?)^```", re.M | re.S)


def _d2l_cells(text: str) -> list[str]:
    """The cells of a d2l chapter tagged for PyTorch (``%%tab``/``#@tab`` pytorch or all)."""
    cells = []
    for match in _D2L_BLOCK.finditer(text):
        body = match.group(1)
        first = body.lstrip().split("\n", 1)[0]
        tag = re.match(r"(%%tab|#@tab)\b(.*)", first)
        if tag is None:
            continue  # an untagged cell is the first tab's (MXNet's)
        tabs = tag.group(2).replace(",", " ").split()
        if "pytorch" in tabs or "all" in tabs:
            cells.append(_clean_cell(body))
    return cells


def program_sources(path: str, text: str) -> list[str] | None:
    """A corpus file as the sources to count, or None when it is not a program."""
    if path.endswith(".py"):
        return [text]
    if path.endswith(".ipynb"):
        return _notebook_cells(text)
    if path.endswith(".md") and "```{.python .input" in text:
        return _d2l_cells(text)
    return None


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def corpus_files(root: Path) -> tuple[dict[str, str], Iterator[tuple[str, str]]]:
    """The repository's identity (name, commit) and its files' (path, text)."""
    if _is_git_dir(root):
        git = ["git", f"--git-dir={root}"]
        commit = subprocess.run(
            [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        url = subprocess.run(
            [*git, "config", "--get", "remote.origin.url"], capture_output=True, text=True
        ).stdout.strip()
        name = _repo_name(root, url)
        listing = subprocess.run(
            [*git, "ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True
        ).stdout.decode()

        def files() -> Iterator[tuple[str, str]]:
            wanted = []
            for row in listing.split("\0"):
                if not row:
                    continue
                meta, path = row.split("\t", 1)
                _, kind, sha = meta.split()
                if kind == "blob" and path.endswith((".py", ".ipynb", ".md")):
                    wanted.append((path, sha))
            with subprocess.Popen(
                [*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            ) as proc:
                assert proc.stdin is not None and proc.stdout is not None
                for path, sha in wanted:
                    proc.stdin.write(sha.encode() + b"\n")
                    proc.stdin.flush()
                    header = proc.stdout.readline().split()
                    if len(header) < 3:  # "<sha> missing": left out of the snapshot
                        continue
                    size = int(header[2])
                    data = proc.stdout.read(size)
                    proc.stdout.read(1)
                    yield path, data.decode("utf-8", errors="replace")
                proc.stdin.close()

        return {"name": name, "commit": commit}, files()

    def tree_files() -> Iterator[tuple[str, str]]:
        for file in sorted(root.rglob("*")):
            if file.suffix in (".py", ".ipynb", ".md") and file.is_file():
                yield str(file.relative_to(root)), file.read_text(errors="replace")

    return {"name": root.name, "commit": ""}, tree_files()


def _repo_name(root: Path, url: str) -> str:
    if url:
        match = re.search(r"github\.com[:/]([^/]+/[^/.]+)", url)
        if match:
            return match.group(1)
    # the fetched snapshots live at .../<owner>+<name>/repo
    parent = root.parent.name if root.name in ("repo", ".git") else root.name
    return parent.replace("+", "/")


def scan(roots: list[Path]) -> dict:
    """Count the torch names the programs under ``roots`` use."""
    counter = UseCounter()
    repos = []
    for root in roots:
        identity, files = corpus_files(root)
        before = sum(counter.counts.values())
        programs = 0
        for path, text in files:
            sources = program_sources(path, text)
            if not sources or "torch" not in text:
                continue
            programs += 1
            counter.count_source(sources)
        identity["programs"] = programs
        identity["uses"] = sum(counter.counts.values()) - before
        repos.append(identity)
        print(f"census: {identity['name']} @ {identity['commit'][:10]}: {programs} programs, "
              f"{identity['uses']} uses", file=sys.stderr)  # fmt: skip
    return {
        "torch": _torch_version(),
        "repositories": repos,
        "counts": dict(sorted(counter.counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "not_in_torch": dict(sorted(counter.unknown.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


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
        "a use] in `tools/census.py`):",
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
