"""Tests of the reference package's surface: exported names, docstrings, allowed imports."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import reference

REFERENCE_DIR = Path(reference.__file__).parent
NAMED_IN_THE_ISSUE = {
    "softmax", "scaled_dot_product_attention", "causal_mask", "padding_mask", "combine_masks",
    "multi_head_attention", "split_heads", "merge_heads", "layer_norm", "rms_norm", "relu", "gelu",
    "silu", "feed_forward", "sinusoidal_encoding", "rope", "encoder_block", "decoder_block",
    "forward", "KVCache", "TransformerConfig", "count_parameters", "PRESETS", "kv_cache_bytes",
    "attention_flops", "attention_memory",
}  # fmt: skip


def test_public_names_are_exported_and_documented():
    assert NAMED_IN_THE_ISSUE <= set(reference.__all__)
    for name in reference.__all__:
        obj = getattr(reference, name)
        if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
            assert obj.__doc__ and obj.__doc__.strip(), f"{name} has no docstring"


def imported_top_level_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_reference_imports_only_numpy_sympy_and_the_standard_library():
    allowed = set(sys.stdlib_module_names) | {"numpy", "reference", "__future__"}
    for path in sorted(REFERENCE_DIR.glob("*.py")):
        extra = imported_top_level_modules(path) - allowed
        if path.name == "exact.py":
            extra -= {"sympy"}
        assert not extra, f"{path.name} imports {sorted(extra)}"


def test_importing_reference_does_not_load_sympy():
    code = "import sys, reference; print('sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
