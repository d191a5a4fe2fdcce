"""Static checks on submitted sources, done with ``ast`` in the grader (nothing is executed).

Why static: a library softmax in the softmax task *works*, so no output comparison can catch it;
the source says it plainly. This is a check for honest shortcuts, not a security boundary (the
sandbox is that): ``__import__`` with a computed string escapes it, and then the sandbox still
refuses to load the library.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from problemgen.code.base import BannedRule
from problemgen.userfiles import syntax_tree

# Banned in every task: other array frameworks, and the grader's own code.
ALWAYS_BANNED = (
    BannedRule(("torch", "tensorflow", "jax", "flax", "keras", "sklearn", "cupy"),
               "the exercise is to write it with numpy"),
    BannedRule(("problemgen", "reference"), "submissions may not use the grader's own code"),
)  # fmt: skip
SOFTMAX_SHORTCUTS = BannedRule(
    ("scipy.special.softmax", "scipy.special.log_softmax", "scipy.special.logsumexp"),
    "the softmax must be written with numpy, not taken from a library",
)


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}, line {self.line}: uses {self.name} ({self.reason})"


def syntax_error(sources: dict[str, str]) -> str | None:
    """The first syntax error among the files, as one line, or None."""
    for name, text in sorted(sources.items()):
        try:
            _parsed(text)
        except SyntaxError as exc:  # NUL bytes are one too, with no line
            where = f"{name}, line {exc.lineno}" if exc.lineno else name
            return f"{where}: SyntaxError: {exc.msg}"
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            return f"{name}: the source cannot be parsed ({type(exc).__name__})"
    return None


@functools.lru_cache(maxsize=4)
def _parsed(text: str) -> ast.Module:
    """The syntax tree of one file; kept for the next check of the same file, so a submission is
    parsed once for both checks (nothing modifies a tree). Parsed silently: a submission never writes to the
    grader's output (:func:`problemgen.userfiles.syntax_tree`; messages name ``name`` themselves)."""
    return syntax_tree(text)


def banned_uses(sources: dict[str, str], rules: tuple[BannedRule, ...]) -> list[Finding]:
    """Every use of a banned name, sorted by file and line."""
    findings: list[Finding] = []
    for name, text in sorted(sources.items()):
        findings += _scan(name, _parsed(text), (*ALWAYS_BANNED, *rules))
    longest: dict[tuple[str, int], Finding] = {}  # one finding per line: the fullest dotted name
    for finding in findings:
        key = (finding.file, finding.line)
        if key not in longest or len(finding.name) > len(longest[key].name):
            longest[key] = finding
    return [longest[key] for key in sorted(longest)]


_CANDIDATES = (ast.Import, ast.ImportFrom, ast.Attribute, ast.Call)  # the only nodes that can name something


def _scan(file: str, tree: ast.AST, rules: tuple[BannedRule, ...]) -> list[Finding]:
    """One walk collects the imports (the alias table) and the nodes that may use a name; the uses are
    resolved afterwards, since an alias applies to the whole file."""
    candidates = [node for node in ast.walk(tree) if isinstance(node, _CANDIDATES)]
    aliases = _aliases(node for node in candidates if isinstance(node, (ast.Import, ast.ImportFrom)))
    found = []
    for node in candidates:
        for dotted in _names_used(node, aliases):
            rule = _rule_for(dotted, rules)
            if rule:
                found.append(Finding(file, getattr(node, "lineno", 0), dotted, rule.reason))
    return found


def _aliases(imports) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from every import in the file."""
    table: dict[str, str] = {}
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                table[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                table[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return table


def _names_used(node: ast.AST, aliases: dict[str, str]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Attribute):
        dotted = _dotted(node)
        if dotted:
            head, _, rest = dotted.partition(".")
            return [f"{aliases.get(head, head)}.{rest}"]
    if isinstance(node, ast.Call) and _is_dynamic_import(node):
        return [arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
    return []


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _is_dynamic_import(node: ast.Call) -> bool:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name in ("__import__", "import_module")


def _rule_for(dotted: str, rules: tuple[BannedRule, ...]) -> BannedRule | None:
    for rule in rules:
        for banned in rule.names:
            if dotted == banned or dotted.startswith(banned + "."):
                return rule
    return None
