"""problemgen: practice problems and automated grading for transformer fundamentals."""

__version__ = "0.1.0"
