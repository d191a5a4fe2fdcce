"""The allow-listed expression parser: what it accepts, what it refuses, and that it never hangs or runs text."""

from __future__ import annotations

import signal
import string
from contextlib import contextmanager

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from problemgen.answers.mathparse import (
    MAX_LENGTH,
    MathParseError,
    equivalent,
    number_value,
    parse_expression,
)


def same(a: str, b: str, symbols=()) -> bool:
    return equivalent(parse_expression(a, symbols).expr, parse_expression(b, symbols).expr)


# ------------------------------------------------------------------------------------------ accepted forms


@pytest.mark.parametrize("text, value", [
    ("1/4", 0.25),
    ("0.25", 0.25),
    ("2^3 + 1", 9.0),          # ^ is power and binds tighter than + (as on paper, unlike Python's xor)
    ("-2^2", -4.0),            # unary minus applies after the power
    ("2**-1", 0.5),
    ("exp(0) + ln(e)", 2.0),
    ("log(8, 2)", 3.0),
    ("sqrt(16)", 4.0),
    ("1e-3", 0.001),
    ("1_000", 1000.0),
    ("pi", 3.141592653589793),
    ("  3  ", 3.0),
    ("2.41/374685276651e-308", 2.41 / 3.74685276651e-297),  # a rational whose numerator is beyond any float
])
def test_numeric_forms_have_the_expected_value(text, value):
    assert number_value(text) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("a, b", [
    ("exp(2)/(exp(2)+exp(6)+exp(-2))", "1/(1+exp(4)+exp(-4))"),
    ("sqrt(2)/2", "1/sqrt(2)"),
    ("2^(1/2)", "sqrt(2)"),
    ("log(exp(3))", "3"),
    ("exp(1)", "e"),
    ("ln(6)", "log(2) + log(3)"),
    ("1/(1+exp(-2))", "exp(2)/(1+exp(2))"),
])
def test_equivalent_forms_are_recognised(a, b):
    assert same(a, b)


@pytest.mark.parametrize("a, b", [
    ("exp(2)/(exp(2)+exp(6)+exp(-2))", "1/(1+exp(4))"),
    ("sqrt(2)/2", "sqrt(3)/2"),
    ("1/(1+exp(-2))", "1/(1+exp(2))"),
    ("pi", "355/113"),              # agrees to 7 digits, not 40
])
def test_different_values_are_not_equivalent(a, b):
    assert not same(a, b)


def test_symbols_are_compared_as_identities():
    symbols = ("d_k", "h")
    assert same("h*d_k", "d_k*h", symbols)
    assert same("sqrt(d_k)*d_k", "d_k^(3/2)", symbols)
    assert not same("d_k", "h", symbols)
    assert not same("d_k^2", "2*d_k", symbols)


def test_decimal_literals_are_flagged_and_kept_exact():
    parsed = parse_expression("0.1")
    assert parsed.decimal
    assert parsed.expr == sympy.Rational(1, 10)
    assert not parse_expression("1/10").decimal


# ------------------------------------------------------------------------------------------ refused forms


@pytest.mark.parametrize("text, reason", [
    ("__import__('os').system('x')", "function"),
    ("__import__", "unknown name"),
    ("lambda: 1", "lambda"),
    ("().__class__", "attribute"),
    ("x.y", "attribute"),
    ("a[0]", "indexing"),
    ("open('f')", "unknown function"),
    ("exp(x=1)", "keyword"),
    ("'text'", "str"),
    ("1 if 1 else 2", "if"),
    ("1 < 2", "comparison"),
    ("[1, 2]", "lists"),
    ("1, 2", "tuples"),
    ("2pi", "*"),
    ("0x1f", "decimal"),
    ("1j", "complex"),
    ("7 % 2", "'%'"),
    ("7 // 2", "'//'"),
    ("exp", "is a function"),
    ("sqrt(1, 2)", "takes 1 argument$"),
    ("log(1, 2, 3)", "takes 1 or 2 arguments$"),
    ("9**9**9", "exponent"),
    ("10^10^10", "exponent"),
    ("2^0.333333", "exponent"),
    ("2^1001", "too large"),
    ("exp(exp(exp(exp(10))))", "too large"),
    ("exp(1000)", "too large"),
    ("1e400", "out of range"),
    ("1e-99999999999999999999", "out of range"),  # too long an exponent for the decimal module itself
    ("2^1e99999999999999999999", "out of range"),
    ("1/0", "division by zero"),
    ("1/(exp(2)-exp(2))", "division by zero"),
    ("log(0)", "log"),
    ("log(-1)", "log"),
    ("log(2, 1)", "base 1"),
    ("sqrt(-1)", "negative"),
    ("(-8)^(1/3)", "negative"),
    ("0^-1", "division by zero"),
    ("(" * 40 + "1" + ")" * 40, "nested"),
    ("-" * 100 + "1", "nested"),
    ("1" * (MAX_LENGTH + 1), "longer"),
    ("9" * 70, "digits"),
    ("", "empty"),
    ("\uff11", "FULLWIDTH DIGIT ONE"),
    ("\u0661", "ARABIC-INDIC DIGIT ONE"),
    ("\u22121", "MINUS SIGN"),
    ("2\u00d73", "MULTIPLICATION SIGN"),
    ("\u0435xp(1)", "CYRILLIC"),
    ("1\x00", "control"),
    ("d_k", "unknown name"),  # symbols only when the part allows them
    ("exp(d_k)", "symbol"),
    ("2^d_k", "symbol"),
])
def test_refused_with_a_clear_message(text, reason):
    symbols = ("d_k",) if "exp(d_k)" in text or "^d_k" in text else ()
    with pytest.raises(MathParseError, match=reason.replace("(", r"\(").replace("*", r"\*")):
        parse_expression(text, symbols)


def test_fullwidth_letters_are_refused_before_python_could_normalise_them():
    """Python's parser folds NFKC identifiers (ｅｘｐ == exp); the ASCII check must come first."""
    with pytest.raises(MathParseError, match="FULLWIDTH LATIN SMALL LETTER E"):
        parse_expression("\uff45\uff58\uff50(1)")


def test_messages_are_one_line():
    for text in ("9**9**9", "lambda: 1", "2pi", "\uff11"):
        with pytest.raises(MathParseError) as info:
            parse_expression(text)
        assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------------------ fuzzing


@contextmanager
def hang_guard(seconds: int):
    """Fail (instead of hanging the suite) if one parse takes longer than ``seconds``. Not a speed test."""
    def on_alarm(signum, frame):
        raise AssertionError(f"parser did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def parse_or_refuse(text: str, symbols=()) -> None:
    with hang_guard(10):
        try:
            parsed = parse_expression(text, symbols)
        except MathParseError as exc:
            assert str(exc) and "\n" not in str(exc)
            return
        if parsed.is_number:
            parsed.value()  # a parsed number always has a finite value
            equivalent(parsed.expr, parsed.expr)


TOKENS = ["1", "2", "9", "0", "0.5", "1e3", "pi", "e", "d_k", "exp(", "log(", "ln(", "sqrt(", "(", ")", "+", "-",
          "*", "/", "^", "**", ",", " ", ".", "_", "__import__", "lambda", ":", "'", "[", "]", "x", "1j",
          "e99999999999999999999", "or"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))
def test_fuzz_token_soup_gives_a_value_or_a_clean_refusal(text):
    parse_or_refuse(text, ("d_k",))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.printable + "\uff11\u2212\u0661\u00d7\u221e", max_size=80))
def test_fuzz_arbitrary_text_gives_a_value_or_a_clean_refusal(text):
    parse_or_refuse(text)


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.sampled_from(["2", "9", "0.5", "e", "pi", "10"]),
                    lambda inner: st.one_of(
                        st.tuples(inner, st.sampled_from(["^", "*", "/", "+", "-"]), inner).map(
                            lambda t: f"({t[0]}{t[1]}{t[2]})"),
                        st.tuples(st.sampled_from(["exp", "log", "sqrt"]), inner).map(lambda t: f"{t[0]}({t[1]})")),
                    max_leaves=12))
def test_fuzz_nested_powers_and_functions_never_hang(text):
    parse_or_refuse(text)


def test_the_bounded_fallback_stops_slow_work_and_keeps_an_outer_alarm():
    import time

    from problemgen.answers.mathparse import run_bounded

    def slow():
        time.sleep(5)
        return "finished"

    with hang_guard(30):
        started = time.monotonic()
        assert run_bounded(slow, 0.2) is None
        assert time.monotonic() - started < 3
        assert run_bounded(lambda: 42, 1.0) == 42
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 20 < remaining <= 30


def test_students_may_write_sine_and_cosine_exactly():
    """Positional-encoding keys carry exact forms such as sin(15) or cos(3/10000^(1/4))."""
    from problemgen.answers.mathparse import equivalent, parse_expression

    assert equivalent(parse_expression("cos(3/10000^(1/4))").expr, parse_expression("cos(3/10)").expr)
    assert not equivalent(parse_expression("sin(15)").expr, parse_expression("cos(15)").expr)
