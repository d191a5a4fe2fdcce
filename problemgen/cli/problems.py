"""``problemgen list``, ``show`` and ``check``: thin click wrappers over the problem library.

``list`` reads the kinds from the generator sources (no numpy, sympy or jinja2); ``show`` generates and renders one
variant; ``check`` runs the variant contract of :mod:`problemgen.selfcheck` and exits 1 on failures.
"""

from __future__ import annotations

import click

from problemgen.documents import FORMATS


@click.command("list")
@click.option("--topic", help="Only kinds of this topic (attention, masks, params, …).")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON array (name, topic, title, summary, difficulties, overrides).")
def list_command(topic: str | None, as_json: bool) -> None:
    """List the problem kinds.

    \b
    Examples:
      problemgen list
      problemgen list --topic masks
      problemgen list --json
    """
    from problemgen.problems.index import listing

    click.echo(listing(topic, as_json=as_json))


@click.command("show")
@click.argument("kind")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Variant seed.")
@click.option("--difficulty", type=click.IntRange(1, 3), help="1 (by hand) to 3; default: the kind's easiest.")
@click.option("--solution", is_flag=True, help="Append the worked solution.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="md", show_default=True,
              help="Markdown, LaTeX or terminal text (Unicode maths).")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
              help="Pin an override (repeatable); `problemgen list --json` lists each kind's overrides and values.")
def show_command(kind: str, seed: int, difficulty: int | None, solution: bool, fmt: str, settings: tuple[str, ...]) -> None:
    """Show one generated problem (and its solution).

    \b
    Examples:
      problemgen show attention.weights --seed 7
      problemgen show masks.causal --seed 3 --difficulty 2 --solution
      problemgen show masks.causal --set L=5 --set representation=additive
      problemgen show shapes.trace --format tex --solution
    """
    from problemgen.documents.rendering import render_problem
    from problemgen.model.overrides import parse_settings
    from problemgen.model.registry import generate

    problem = generate(kind, seed, difficulty, **parse_settings(settings))
    click.echo(render_problem(problem, fmt, solution=solution), nl=False)


@click.command("check")
@click.argument("kinds", nargs=-1)
@click.option("--seeds", type=click.IntRange(min=1), default=50, show_default=True, help="Seeds per kind.")
@click.option("--topic", help="Check only the kinds of this topic.")
@click.option("--code/--no-code", "code", default=None,
              help="Also run the coding tasks' mutation contract (default: when no kind or topic is named).")
@click.pass_context
def check_command(ctx: click.Context, kinds: tuple[str, ...], seeds: int, topic: str | None, code: bool | None) -> None:
    """Self-check generated variants of every kind, and every coding task's mutants (exit 1 on any failure).

    Also counts each kind's distinct answer keys over 100 seeds at difficulty 2
    and fails a kind below its threshold (numeric 30, or 10 when its docstring
    says the answer space is small; shapes and choices 5).

    \b
    Examples:
      problemgen check
      problemgen check attention.weights masks.causal --seeds 200
      problemgen check --topic scaling --no-code
    """
    from problemgen import selfcheck, variety

    results = selfcheck.check_kinds(kinds, seeds, topic=topic)
    failures = [str(f) for fs in results.values() for f in fs]
    measured = [variety.measure(kind) for kind in results]
    failures += [f"{v.kind} [variety] {v}" for v in measured if not v.ok]
    summary = [variety.report(measured), selfcheck.summary(results, seeds)]
    if code if code is not None else not (kinds or topic):
        from problemgen.code.tasks import mutation

        code_results = mutation.check_tasks()
        failures += [str(f) for fs in code_results.values() for f in fs]
        summary.append(mutation.summary(code_results))
    click.echo("".join(line + "\n" for line in failures + summary), nl=False)
    if failures:
        ctx.exit(1)
