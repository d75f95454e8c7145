"""The parser of ``rearrange``'s einops patterns, as torch's ``functorch/einops/_parsing.py``
(adapted, as torch's, from einops' ``parsing.py``: Copyright (c) 2018 Alex Rogozhnikov,
MIT License) with its checks and words.

Examples
--------
>>> left, right = parse_pattern("b (h w) c -> b h w c", {"h": 2})
>>> left.composition, right.composition
([['b'], ['h', 'w'], ['c']], [['b'], ['h'], ['w'], ['c']])
"""

from __future__ import annotations

import keyword
import warnings

__all__ = ["AnonymousAxis", "ParsedExpression", "parse_pattern", "validate_rearrange_expressions"]

_ellipsis: str = "\u2026"  # (one unicode character standing for "...")


class AnonymousAxis:
    """An axis with a size (> 1) and no name; two instances are never equal."""

    def __init__(self, value: str) -> None:
        self.value = int(value)
        if self.value < 1:
            raise ValueError(f"Anonymous axis should have positive length, not {self.value}")

    def __repr__(self) -> str:
        return f"{self.value}-axis"


class ParsedExpression:
    """One side of a pattern (``"b c (h w)"``): ``composition`` is a list with, per
    dimension, the list of its axes (``[]`` for a unit axis) or the ellipsis."""

    def __init__(self, expression: str, *, allow_underscore: bool = False,
                 allow_duplicates: bool = False) -> None:  # fmt: skip
        self.has_ellipsis = False
        self.has_ellipsis_parenthesized: bool | None = None
        self.identifiers: set = set()
        self.has_non_unitary_anonymous_axes = False
        self.composition: list = []
        if "." in expression:
            if "..." not in expression:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if str.count(expression, "...") != 1 or str.count(expression, ".") != 3:
                raise ValueError(
                    "Expression may contain dots only inside ellipsis (...); only one ellipsis "
                    "for tensor "
                )
            expression = expression.replace("...", _ellipsis)
            self.has_ellipsis = True

        bracket_group: list | None = None

        def add_axis_name(x: str) -> None:
            if x in self.identifiers:
                if not (allow_underscore and x == "_") and not allow_duplicates:
                    raise ValueError(f"Indexing expression contains duplicate dimension '{x}'")
            if x == _ellipsis:
                self.identifiers.add(_ellipsis)
                if bracket_group is None:
                    self.composition.append(_ellipsis)
                    self.has_ellipsis_parenthesized = False
                else:
                    bracket_group.append(_ellipsis)
                    self.has_ellipsis_parenthesized = True
                return
            is_number = str.isdecimal(x)
            if is_number and int(x) == 1:
                if bracket_group is None:  # (a 1 inside brackets changes nothing)
                    self.composition.append([])
                return
            is_axis_name, reason = self.check_axis_name_return_reason(
                x, allow_underscore=allow_underscore
            )
            if not (is_number or is_axis_name):
                raise ValueError(f"Invalid axis identifier: {x}\n{reason}")
            axis_name = AnonymousAxis(x) if is_number else x
            self.identifiers.add(axis_name)
            if is_number:
                self.has_non_unitary_anonymous_axes = True
            if bracket_group is None:
                self.composition.append([axis_name])
            else:
                bracket_group.append(axis_name)

        current_identifier = None
        for char in expression:
            if char in "() ":
                if current_identifier is not None:
                    add_axis_name(current_identifier)
                current_identifier = None
                if char == "(":
                    if bracket_group is not None:
                        raise ValueError(
                            "Axis composition is one-level (brackets inside brackets not allowed)"
                        )
                    bracket_group = []
                elif char == ")":
                    if bracket_group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(bracket_group)
                    bracket_group = None
            elif str.isalnum(char) or char in ["_", _ellipsis]:
                current_identifier = (
                    char if current_identifier is None else current_identifier + char
                )
            else:
                raise ValueError(f"Unknown character '{char}'")
        if bracket_group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")
        if current_identifier is not None:
            add_axis_name(current_identifier)

    @staticmethod
    def check_axis_name_return_reason(name: str, allow_underscore: bool = False):
        """Whether ``name`` is a valid axis name (a Python identifier, not starting or
        ending with an underscore), and why not."""
        if not str.isidentifier(name):
            return False, "not a valid python identifier"
        if name[0] == "_" or name[-1] == "_":
            if name == "_" and allow_underscore:
                return True, ""
            return False, "axis name should should not start or end with underscore"
        if keyword.iskeyword(name):
            warnings.warn(
                f"It is discouraged to use axes names that are keywords: {name}",
                RuntimeWarning,
                stacklevel=2,
            )
        if name == "axis":
            warnings.warn(
                "It is discouraged to use 'axis' as an axis name and will raise an error in future",
                FutureWarning,
                stacklevel=2,
            )
        return True, ""

    @staticmethod
    def check_axis_name(name: str) -> bool:
        return ParsedExpression.check_axis_name_return_reason(name)[0]


def parse_pattern(pattern: str, axes_lengths):
    """The left and right :class:`ParsedExpression` of ``"left -> right"``."""
    try:
        left_str, right_str = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ellipsis in axes_lengths:
        raise ValueError(f"'{_ellipsis}' is not an allowed axis identifier")
    left = ParsedExpression(left_str)
    right = ParsedExpression(right_str)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.has_ellipsis_parenthesized:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    return left, right


def validate_rearrange_expressions(left, right, axes_lengths) -> None:
    """``rearrange``'s checks: integer lengths, unnamed axes of size 1 only, the same
    identifiers on both sides, lengths only for identifiers of the pattern."""
    for length in axes_lengths.values():
        if (length_type := type(length)) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {length_type}")
    if left.has_non_unitary_anonymous_axes or right.has_non_unitary_anonymous_axes:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = set.symmetric_difference(left.identifiers, right.identifiers)
    if len(difference) > 0:
        raise ValueError(
            "Identifiers only on one side of rearrange expression (should be on both): "
            f"{difference}"
        )
    unmatched_axes = axes_lengths.keys() - left.identifiers
    if len(unmatched_axes) > 0:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched_axes}")
