"""``problemgen worksheet`` and ``problemgen bank``: option parsing only; the work is in the library."""

from __future__ import annotations

import click

from problemgen.cli.progress import PROGRESS_OPTION, class_progress
from problemgen.documents import banks, worksheet
from problemgen.errors import ProblemgenError
from problemgen.wording import counted


@click.command("worksheet")
@click.argument("bank")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--seed", type=click.IntRange(0, worksheet.MAX_SEED), help="Worksheet seed (default: the bank's seed).")
@click.option("--format", "formats", default="md", show_default=True, help="Comma-separated: md, tex, pdf.")
@click.option("--roster", type=click.Path(dir_okay=False),
              help="CSV (, or ; separated) with an id/student_id/student/SID column and optionally a name column.")
@click.option("--id-column", metavar="NAME", help="The roster column holding the student ids.")
@click.option("--secret-env", metavar="VAR", help="Environment variable holding the class secret (with --roster).")
@click.option("--templates", type=click.Path(file_okay=False), help="Directory of templates overriding the built-in ones.")
@click.option("--force", is_flag=True,
              help="Write into a non-empty directory, replacing an earlier run's files (see above).")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes for a class set (default: automatic).")
@PROGRESS_OPTION
def worksheet_command(bank, out_dir, seed, formats, roster, id_column, secret_env, templates, force, jobs, progress):
    """Turn a question BANK into a worksheet, answer key, answer sheets and variant.json.

    BANK is a TOML file or the name of a shipped bank (see `problemgen bank list`). DIR receives
    worksheet.md, answer_key.md (worked solutions), answers.toml (blank sheet), key.toml (filled
    sheet) and variant.json (what `problemgen grade` reads); .tex/.pdf as --format asks. A non-empty
    DIR is refused unless --force: files of the same names are replaced and then, so that DIR describes
    this run alone, the files an earlier run left under these names that this run did not write (a
    format not asked now; the folders of a student no longer on the roster) are removed and named on
    stderr. Other files are left.

    With --roster, every student gets handouts/<id>/ (worksheet, blank answers.toml: safe to hand
    out) and keys/<id>/ (answer key, key.toml, variant.json), seeded by HMAC-SHA256 of the secret
    (at least 16 characters) in the named environment variable, the bank and the student id, plus
    manifest.json and, with pdf, handouts.pdf and keys.pdf for printing. The roster's name column is
    printed on the handout. A different --seed gives the class a fresh round of variants.

    \b
    Example:
      problemgen worksheet attention_basics -o out/
      problemgen worksheet masking -o masking/ --seed 3 --format md,tex,pdf
      export CLASS_SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
      problemgen worksheet mixed_exam -o class/ --roster roster.csv --secret-env CLASS_SECRET
    """
    if bool(roster) != bool(secret_env) or (id_column and not roster):
        raise click.UsageError("--roster and --secret-env go together (and --id-column needs --roster)")
    job = worksheet.WorksheetJob(bank, out_dir, seed, worksheet.parse_formats(formats), templates, force, jobs)
    if not roster:
        variant = worksheet.write_worksheet(job, _warn)
        return click.echo(f"wrote {len(variant.problems)} problems ({variant.variant_id}) to {out_dir}")
    with class_progress(progress, "students") as advance:
        entries = worksheet.write_class_set(job, roster, secret_env, advance, id_column, _warn)
    click.echo(f"wrote {counted(len(entries), 'student worksheet')} and manifest.json to {out_dir}")


def _warn(line: str) -> None:
    click.echo(f"warning: {line}", err=True)


@click.group("bank")
def bank_group():
    """Validate, list and inspect question banks.

    \b
    Example:
      problemgen bank list
      problemgen bank validate masking
      problemgen bank show attention_basics
    """


@bank_group.command("validate")
@click.argument("paths", nargs=-1, required=True)
@click.option("--templates", type=click.Path(file_okay=False), help="Template directory the banks will be rendered with.")
@click.pass_context
def validate_command(ctx, paths, templates):
    """Check banks: kinds, counts, difficulties, overrides, fragments; errors name file, line and key.

    Exit code 0 when every bank is valid, 2 otherwise.

    \b
    Example:
      problemgen bank validate masking mixed_exam
    """
    failures = 0
    for path in paths:
        try:
            bank, issues = banks.check_bank(path, templates=templates)
        except ProblemgenError as exc:  # unreadable or not TOML: report it and check the other banks
            bank, issues = None, [exc]
        for issue in issues:
            click.echo(f"error: {issue}", err=True)
        failures += bool(issues)
        if bank:
            click.echo(f"ok: {bank.path} ({bank.size} problems)")
    ctx.exit(2 if failures else 0)


@bank_group.command("list")
def list_command():
    """List the shipped question banks.

    \b
    Example:
      problemgen bank list
    """
    for path in banks.shipped_banks():
        bank, issues = banks.check_bank(path, try_generate=False)
        summary = f"{bank.size:>3} problems  {bank.title}" if bank else f"invalid: {issues[0].message}"
        click.echo(f"{path.stem:<20} {summary}")


@bank_group.command("show")
@click.argument("bank")
def show_command(bank):
    """Show what a bank puts on a worksheet (kinds, counts, difficulty, points).

    \b
    Example:
      problemgen bank show full_block
    """
    click.echo(banks.describe_bank(banks.load_bank(bank)))
