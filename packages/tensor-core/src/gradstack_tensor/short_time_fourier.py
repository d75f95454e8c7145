"""torch's short-time Fourier transform and its inverse: ``stft`` and ``istft`` (and
their Tensor methods).

Both are torch's ``SpectralOps.cpp`` (and ``torch.functional.stft``'s centring) composed
of gradstack ops, so they differentiate through them: the signal padded by ``n_fft // 2``
on each side (``center``, by ``pad_mode``), cut into frames of ``n_fft`` every
``hop_length`` (``unfold``, a view), times the window (centred in ``n_fft`` when shorter),
then the transform of each frame (the ops ``fft_r2c``/``fft_c2c`` of ``torch.fft``),
frequencies before frames.  ``istft`` inverts each frame (``fft_c2r``/``fft_c2c``,
normalised by ``n``), multiplies by the window, overlaps and adds the frames
(``index_add``: torch's ``unfold_backward``) and divides by the overlapped squared
window, after trimming the centring.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.arange(8.0)
>>> s = gt.stft(x, 4, window=gt.hann_window(4), return_complex=True)
>>> tuple(s.shape)  # (n_fft // 2 + 1 frequencies, 8 // (4 // 4) + 1 frames)
(3, 9)
>>> y = gt.istft(s, 4, window=gt.hann_window(4), length=8)
>>> [round(v, 4) for v in y.tolist()]
[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
"""

from __future__ import annotations

import warnings

import numpy as np

from ._dispatch import OPS, dispatch
from ._signatures import checked
from ._tensor import Tensor, _wrap

__all__ = ["stft", "istft"]

_NORM_NONE, _NORM_BY_ROOT_N, _NORM_BY_N = 0, 1, 2
_WARNED: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    """torch's ``TORCH_WARN_ONCE``: once a process."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _opt(v) -> str:
    return "None" if v is None else str(int(v)) if isinstance(v, bool) else str(v)


def _type_of(t: Tensor) -> str:
    try:
        return t.type()
    except (KeyError, RuntimeError, TypeError):  # (complex dtypes have no legacy type name)
        return str(t.dtype)


def _describe(t: Tensor) -> str:
    return f"{_type_of(t)}{list(t.shape)}"


def _pad_last(x: Tensor, pad: int, mode: str) -> Tensor:
    """``F.pad(x, [pad, pad], mode)`` along the last dim, by an index (or zeros)."""
    n = x.shape[-1]
    if mode == "constant":
        from .creation import zeros as _zeros

        zeros = _zeros(tuple(x.shape[:-1]) + (pad,), dtype=x.dtype)
        return dispatch(OPS["cat"], ([zeros, x, zeros], -1))
    if mode == "reflect":
        if pad >= n:
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({pad}, {pad}) at dimension {x.dim() - 1} of "
                f"input {list(x.shape)}"
            )
        idx = np.concatenate(
            [np.arange(pad, 0, -1), np.arange(n), np.arange(n - 2, n - 2 - pad, -1)]
        )
    elif mode == "replicate":
        idx = np.concatenate([np.zeros(pad, np.int64), np.arange(n), np.full(pad, n - 1)])
    elif mode == "circular":
        if pad > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        idx = np.concatenate([np.arange(n - pad, n), np.arange(n), np.arange(pad)])
    else:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    return x.index_select(-1, _wrap(idx.astype(np.int64)))


def _centred_window(window, win_length: int, n_fft: int, like: Tensor):
    """The window placed in the middle of ``n_fft`` zeros (or ones of ``win_length``)."""
    from .creation import ones, zeros

    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    base = window if window is not None else ones(win_length, dtype=like.dtype)
    z_left = zeros(left, dtype=base.dtype)
    z_right = zeros(n_fft - win_length - left, dtype=base.dtype)
    return dispatch(OPS["cat"], ([z_left, base, z_right], 0))


@checked(
    "stft",
    "int n_fft, int? hop_length, int? win_length, Tensor? window, bool center, str pad_mode, "
    "bool normalized, bool? onesided, bool? return_complex, bool? align_to_window",
)
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None) -> Tensor:  # fmt: skip
    """The short-time Fourier transform of a 1-d signal or a batch of them (2-d): the
    transform of each frame of ``n_fft`` samples taken every ``hop_length``, times
    ``window``; ``(freq, frames)`` per signal.

    Parameters
    ----------
    input : Tensor
        ``(L,)`` or ``(B, L)`` samples, real or complex.
    n_fft : int
        The frame (and transform) size.
    hop_length : int, optional
        The distance between frames (``n_fft // 4``).
    win_length : int, optional
        The window's size (``n_fft``); a shorter window is centred in the frame.
    window : Tensor, optional
        The window (rectangular when None, with torch's warning).
    center : bool
        Pad the signal by ``n_fft // 2`` on both sides (``pad_mode``) so that frame ``t``
        is centred at ``t * hop_length``.
    pad_mode : str
        ``"reflect"``, ``"constant"``, ``"replicate"`` or ``"circular"``.
    normalized : bool
        Multiply by ``1 / sqrt(n_fft)``.
    onesided : bool, optional
        Only the ``n_fft // 2 + 1`` non-negative frequencies (default for real input).
    return_complex : bool
        Complex output (required for real input, as torch); False gives torch's
        deprecated ``view_as_real`` layout.
    align_to_window : bool, optional
        With ``center=False``: frames start where the window starts.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> s = gt.stft(gt.ones(8), 4, hop_length=2, window=gt.ones(4), center=False,
    ...             return_complex=True)
    >>> s.real.tolist()
    [[4.0, 4.0, 4.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    x = input
    if center:  # torch.functional.stft's centring, before the checks of the op
        signal_dim = x.dim()
        pad = int(n_fft // 2)
        extended = (1,) * max(3 - signal_dim, 0) + tuple(x.shape)
        x = _pad_last(x.reshape(extended), pad, pad_mode)
        x = x.reshape(tuple(x.shape[-signal_dim:]) if signal_dim else ())
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def repr_(what: str) -> RuntimeError:
        w = "None" if window is None else f"{_type_of(window)}{{{list(window.shape)}}}"
        return RuntimeError(
            f"stft({_describe(x)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={w}, normalized={int(bool(normalized))}, onesided={_opt(onesided)}, "
            f"return_complex={_opt(return_complex)}) : {what}"
        )

    if window is None:
        _warn_once(
            "stft window",
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as torch.hann_window or "
            "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.",
        )
    complex_input = x.is_complex() or (window is not None and window.is_complex())
    want_complex = complex_input if return_complex is None else bool(return_complex)
    if not want_complex:
        if return_complex is None:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        _warn_once(
            "stft real",
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise "
            "an error.\nNote: you can still call torch.view_as_real on the complex output to "
            "recover the old return format.",
        )
    if not (x.is_floating_point() or x.is_complex()):
        raise repr_("expected a tensor of floating point or complex values")
    if x.dim() > 2 or x.dim() < 1:
        raise repr_("expected a 1D or 2D tensor")
    frames_in = x.unsqueeze(0) if x.dim() == 1 else x
    length = frames_in.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise repr_(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise repr_(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise repr_(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise repr_(
            f"expected a 1D window tensor of size equal to win_length={win}, but got window "
            f"with size {list(window.shape)}"
        )
    w = window if win == n_fft else _centred_window(window, win, n_fft, x)
    if not center and align_to_window:
        cut = (n_fft - win) // 2
        frames_in = _pad_last(frames_in, cut, pad_mode) if cut else frames_in
        frames = frames_in.unfold(1, n_fft, hop)
        n_frames = 1 + (length - win) // hop
        frames = frames.narrow(1, 0, n_frames)
    else:
        frames = frames_in.unfold(1, n_fft, hop)  # (batch, frames, n_fft), a view
    if w is not None:
        frames = frames * w
    complex_fft = frames.is_complex()
    sided = (not complex_fft) if onesided is None else bool(onesided)
    norm = _NORM_BY_ROOT_N if normalized else _NORM_NONE
    if complex_fft:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = dispatch(OPS["fft_c2c"], (frames, (2,), norm, True))
    else:
        out = dispatch(OPS["fft_r2c"], (frames, (2,), norm, sided))
    out = out.transpose(1, 2)
    if x.dim() == 1:
        out = out.squeeze(0)
    if want_complex:
        return out
    return dispatch(OPS["view_as_real"], (out,))


@checked(
    "istft",
    "int n_fft, int? hop_length, int? win_length, Tensor? window, bool center, "
    "bool normalized, bool? onesided, int? length, bool return_complex",
)
def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
) -> Tensor:
    """The inverse of :func:`stft`: each frame's inverse transform, times the window,
    overlapped and added, divided by the overlapped squared window.

    Parameters
    ----------
    input : Tensor
        A complex ``(freq, frames)`` or ``(B, freq, frames)`` spectrogram (:func:`stft`'s).
    n_fft, hop_length, win_length, window, center, normalized, onesided
        As given to :func:`stft`.
    length : int, optional
        The signal's length (trimmed, or padded with zeros with torch's warning).
    return_complex : bool
        A complex signal (the two-sided inverse).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> w = gt.hann_window(8)
    >>> x = gt.linspace(-1.0, 1.0, 20)
    >>> y = gt.istft(gt.stft(x, 8, window=w, return_complex=True), 8, window=w, length=20)
    >>> bool((y - x).abs().max() < 1e-6)
    True
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if window is None:
        _warn_once(
            "istft window",
            "A window was not provided. A rectangular window will be applied. Please provide "
            "the same window used by stft to make the inversion lossless. To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.",
        )
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def repr_(what: str) -> RuntimeError:
        w = "None" if window is None else f"{_type_of(window)}{{{list(window.shape)}}}"
        return RuntimeError(
            f"istft({_describe(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={w}, center={int(bool(center))}, normalized={int(bool(normalized))}, "
            f"onesided={_opt(onesided)}, length={_opt(length)}, "
            f"return_complex={int(bool(return_complex))}) {what}"
        )

    if not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    spec = input.resolve_conj() if input.is_conj() else input
    real_dim = spec.dim() + 1
    if spec.numel() == 0:
        raise repr_(": input tensor cannot be empty.")
    if real_dim not in (3, 4):
        raise repr_(
            ": expected a tensor with 3 or 4 dimensions of real, or 2 or 3 dimensions of  "
            f"complex, but got {real_dim}"
        )
    n_frames, fft_size = spec.shape[-1], spec.shape[-2]
    expected = n_fft + hop * (n_frames - 1)
    sided = (fft_size != n_fft) if onesided is None else bool(onesided)
    if sided and n_fft // 2 + 1 != fft_size:
        raise repr_(
            ": expected the frequency dimension (3rd to the last) of the input tensor to match "
            f"n_fft / 2 + 1 when onesided=True, but got {fft_size}"
        )
    if not sided and n_fft != fft_size:
        raise repr_(
            ": expected the frequency dimension (3rd to the last) of the input tensor to match "
            f"n_fft when onesided=False, but got {fft_size}"
        )
    if not 0 < hop <= win:
        raise repr_(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise repr_(": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise repr_(": Invalid window shape. window has to be 1D and length of `win_length`")
    from .creation import ones

    real_dtype = spec.dtype.to_real()
    w = window if window is not None else ones(win, dtype=real_dtype)
    if win != n_fft:
        w = _centred_window(w, win, n_fft, w)
    batched = spec if spec.dim() == 3 else spec.unsqueeze(0)
    frames = batched.transpose(1, 2)  # (channel, n_frames, fft_size)
    norm = _NORM_BY_ROOT_N if normalized else _NORM_BY_N
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = dispatch(OPS["fft_c2c"], (frames, (2,), norm, False))
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        frames = dispatch(OPS["fft_c2r"], (frames, (2,), norm, n_fft))
    y_tmp = frames * w.reshape(1, 1, n_fft)
    channels = y_tmp.shape[0]
    at = (np.arange(n_frames)[:, None] * hop + np.arange(n_fft)[None, :]).reshape(-1)
    at_t = _wrap(at.astype(np.int64))
    from .creation import zeros

    y = zeros((channels, expected), dtype=y_tmp.dtype).index_add(
        1, at_t, y_tmp.reshape(channels, n_frames * n_fft)
    )
    squared = (w * w).expand(n_frames, n_fft).reshape(1, n_frames * n_fft)
    envelope = zeros((1, expected), dtype=squared.dtype).index_add(1, at_t, squared)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = expected - n_fft // 2
    else:
        end = expected
    stop = min(end, expected)
    y = y.narrow(1, start, max(stop - start, 0))
    envelope = envelope.narrow(1, start, max(stop - start, 0))
    if envelope.numel() and bool((envelope.abs().min() < 1e-11).item()):
        raise repr_("window overlap add min: 1")
    y = y / envelope
    if spec.dim() == 2:
        y = y.squeeze(0)
    if end > expected:
        _warn_once(
            "istft length",
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
        )
        tail = zeros(tuple(y.shape[:-1]) + (end - expected,), dtype=y.dtype)
        y = dispatch(OPS["cat"], ([y, tail], -1))
    return y
