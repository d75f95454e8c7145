"""The text table of a profile: torch's columns and units, plus a footer that explains them.

The layout follows ``torch.autograd.profiler_util._build_table`` so that tables of the same
program under torch and gradstack line up; it differs in three ways, each a complaint
about torch's tables: it never writes into the events it prints (torch stores the
percentages on them), it ends with a short explanation of Self vs total
(pytorch#33855), and an unknown ``sort_by`` names the valid keys.
"""

from __future__ import annotations

__all__ = ["build_table", "format_time", "format_time_share", "format_memory", "SORT_KEYS"]

SORT_KEYS = (
    "self_cpu_time_total",
    "cpu_time_total",
    "cpu_time",
    "self_cpu_time",
    "count",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "cuda_time",
    "cuda_time_total",
    "self_cuda_time_total",
    "device_time",
    "device_time_total",
    "self_device_time_total",
    "cuda_memory_usage",
    "self_cuda_memory_usage",
    "device_memory_usage",
    "self_device_memory_usage",
    "xpu_time",
    "xpu_time_total",
    "self_xpu_time_total",
)

FOOTER = (
    "Self CPU: time in the event's own code, excluding the events it called (its children:\n"
    "ops inside ops, the ops a backward node runs, the contents of a record_function block).\n"
    "CPU total: from the event's start to its end, children included, so nested time appears\n"
    "in several rows; add up Self CPU, not CPU total. Percentages are of Self CPU time total.\n"
)

MEMORY_FOOTER = (
    "CPU Mem: bytes of tensors created minus bytes of tensors freed during the event,\n"
    "children included; Self CPU Mem: without the children's.\n"
)

_US_IN_SECOND = 1000.0 * 1000.0
_US_IN_MS = 1000.0


def format_time(time_us) -> str:
    """torch's time format: ``12.345us``, ``1.234ms``, ``1.234s``."""
    if time_us >= _US_IN_SECOND:
        return f"{time_us / _US_IN_SECOND:.3f}s"
    if time_us >= _US_IN_MS:
        return f"{time_us / _US_IN_MS:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_in(time_us, unit) -> str:
    if unit is None:
        return format_time(time_us)
    if unit == "s":
        return f"{time_us / _US_IN_SECOND:.3f}s"
    if unit == "ms":
        return f"{time_us / _US_IN_MS:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    raise ValueError(f"time_unit must be 's', 'ms', 'us' or None, not {unit!r}")


def format_time_share(time_us, total_us) -> str:
    """``time_us`` as a percentage of ``total_us`` (``NaN`` when the total is zero)."""
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def format_memory(nbytes) -> str:
    """torch's memory format: ``512 B``, ``1.50 KB``, ``2.00 MB``, ``1.00 GB``."""
    kb = 1024
    mb = 1024 * kb
    gb = 1024 * mb
    if abs(nbytes) >= gb:
        return f"{nbytes * 1.0 / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes * 1.0 / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes * 1.0 / kb:.2f} KB"
    return f"{nbytes} B"


def _sort_value(evt, sort_by):
    if sort_by not in SORT_KEYS:
        raise ValueError(f"cannot sort by {sort_by!r}; valid keys: {', '.join(SORT_KEYS)}")
    return getattr(evt, sort_by.replace("cuda", "device").replace("xpu", "device"))


def _trim_path(path, width):
    if len(path) > width:
        path = path[len(path) - width :]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def build_table(
    events,
    *,
    sort_by=None,
    row_limit=100,
    max_src_column_width=75,
    max_name_column_width=55,
    max_shapes_column_width=80,
    header=None,
    profile_memory=False,
    top_level_events_only=False,
    time_unit=None,
) -> str:
    """Render ``events`` (FunctionEvent or FunctionEventAvg objects) as a table."""
    if len(events) == 0:
        return "(no events: the profile was disabled, or no op ran inside it)\n"
    _format_time_in(0.0, time_unit)  # validate the unit up front
    rows = list(events)
    if sort_by is not None:
        rows.sort(key=lambda e: _sort_value(e, sort_by), reverse=True)

    has_device_time = any(e.self_device_time_total > 0 for e in rows)
    device = (rows[0].use_device or "cuda").upper()
    has_input_shapes = any(e.input_shapes for e in rows)
    has_stack = any(e.stack for e in rows)

    name_width = max(len(e.key) for e in rows) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in rows) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    src_width = None
    if has_stack:
        src_width = max(len(entry) for e in rows for entry in e.stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        headers += [f"Self {device}", f"Self {device} %", f"{device} total", f"{device} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    if has_stack:
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")

    spacing = "  "
    row_format = "".join("{: " + a + str(w) + "}" + spacing for a, w in zip(aligns, widths))
    separator = "".join("-" * w + spacing for w in widths)
    line_length = sum(widths) + len(spacing) * (len(widths) - 1)

    # the share columns divide by the profiled time: every row's self time, once
    total_self = sum(e.self_cpu_time_total for e in rows)
    total_self_device = sum(e.self_device_time_total for e in rows)

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]

    shown = 0
    for evt in rows:
        if row_limit is not None and row_limit >= 0 and shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        values = [
            name,
            format_time_share(evt.self_cpu_time_total, total_self),
            _format_time_in(evt.self_cpu_time_total, time_unit),
            format_time_share(evt.cpu_time_total, total_self),
            _format_time_in(evt.cpu_time_total, time_unit),
            _format_time_in(evt.cpu_time, time_unit),
        ]
        if has_device_time:
            values += [
                _format_time_in(evt.self_device_time_total, time_unit),
                format_time_share(evt.self_device_time_total, total_self_device),
                _format_time_in(evt.device_time_total, time_unit),
                _format_time_in(evt.device_time, time_unit),
            ]
        if profile_memory:
            values += [
                format_memory(evt.cpu_memory_usage),
                format_memory(evt.self_cpu_memory_usage),
            ]
        values.append(evt.count)
        if has_input_shapes:
            values.append(str(evt.input_shapes)[:shapes_width])
        if has_stack:
            values.append(_trim_path(evt.stack[0], src_width) if evt.stack else "")
        lines.append(row_format.format(*values))
        if has_stack:
            blank = [""] * (len(headers) - 1)
            for entry in evt.stack[1:]:
                lines.append(row_format.format(*(blank + [_trim_path(entry, src_width)])))
            lines.append(row_format.format(*([""] * len(headers))))

    lines.append(separator)
    lines.append(f"Self CPU time total: {_format_time_in(total_self, time_unit)}")
    if has_device_time:
        lines.append(f"Self {device} time total: {_format_time_in(total_self_device, time_unit)}")
    text = "\n".join(lines) + "\n\n" + FOOTER
    if profile_memory:
        text += MEMORY_FOOTER
    return text
