"""collgrad_core: what the PyTorch check and the JAX check share, framework-free.

Standard library only, so both collgrad_torch and collgrad_jax stand on it
and neither imports the other (tests/test_core.py holds them to that):

- the verdict's words: ``result.py`` (Result, TensorCheck and their table),
  ``errors.py`` (CheckError, GradientMismatch), ``exit_class.py`` (the exit
  statuses, the C tool's cg_exit), ``options.py`` (the word options' types);
- the truth's arithmetic: ``fd_error.py`` (the finite differences' steps and
  their error bound), ``patterns.py`` (the named mistakes a ratio of gradients
  shows);
- reports and commands: ``report.py`` (JSON report-1 and JUnit),
  ``cli_words.py`` (world lists, seconds, exit lines), ``interrupt.py``
  (SIGINT/SIGTERM into an exception), ``stacks.py``, ``refs.py`` (a user's
  function named so a fresh process imports it);
- the C tool's case IR for the interpreters outside it: ``ir.py`` (the
  document), ``rng.py`` (the C random streams), ``scalar_ops.py`` (IEEE scalar
  arithmetic), ``result_files.py`` (the lines and status file the tool reads).
"""
