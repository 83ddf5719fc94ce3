"""A fast start (issue #34): ``import advgame`` and ``advgame --help`` load none of the heavy
libraries, every public name still resolves on first access (PEP 562), and a first fit with an
empty numba cache compiles and gives the numbers of a cached one.  Each import check runs in a
fresh interpreter, as a user's first command would; no wall-clock assertion."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

import advgame as ag
from advgame import _kernels

#: The libraries that cost (most of) a second or more to import.
HEAVY = ("sklearn", "cvxpy", "numba", "matplotlib", "scipy.stats")


def _fresh(code, env=None):
    """Run ``code`` in a fresh interpreter; return its stdout (its last line is JSON)."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _loaded_after(statements):
    code = (
        "import json, sys\n"
        f"{statements}\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    return json.loads(_fresh(code).splitlines()[-1])


def test_import_advgame_loads_no_heavy_library():
    assert _loaded_after("import advgame") == []


def test_light_names_load_no_heavy_library():
    """The losses, the exceptions other than ConvergenceWarning and the version are light."""
    statements = (
        "import advgame as ag\n"
        "ag.losses.zero_one(3); ag.LossMatrix; ag.SolverError; ag.NotApplicableError; "
        "ag.__version__"
    )
    assert _loaded_after(statements) == []


@pytest.mark.parametrize("argv", [["--help"], ["explain", "--help"], ["--version"]])
def test_cli_help_loads_no_heavy_library(argv):
    statements = (
        f"from advgame.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    )
    assert _loaded_after(statements) == []


def test_every_public_name_resolves():
    for name in ag.__all__:
        assert getattr(ag, name) is not None, name
    assert set(ag.__all__) <= set(dir(ag))
    for name in ag.models.__all__:
        assert getattr(ag.models, name) is not None, name
    assert set(ag.models.__all__) <= set(dir(ag.models))
    from advgame import AdversarialClassifier, ConvergenceWarning, Game, closed_forms

    assert AdversarialClassifier is ag.models.AdversarialClassifier
    assert Game is ag.game.Game and closed_forms is ag.closed_forms
    assert ConvergenceWarning is ag.exceptions.ConvergenceWarning


def test_unknown_names_raise_attribute_error():
    for module in (ag, ag.models, ag.exceptions):
        with pytest.raises(AttributeError, match="no_such_name"):
            module.no_such_name  # noqa: B018
    assert not hasattr(ag, "__no_such_dunder__")


def test_convergence_warning_is_scikit_learns():
    """One filter catches both (the documented promise), though scikit-learn loads only when
    the class is first used."""
    warning = ag.exceptions.ConvergenceWarning
    assert issubclass(warning, SklearnConvergenceWarning)
    assert warning.__module__ == "advgame.exceptions"
    assert warning.__qualname__ == "ConvergenceWarning"
    assert "ConvergenceWarning" in dir(ag.exceptions)


SPECIALS = np.array([np.nan, np.inf, -np.inf, 1e308, -1e308, 1e-300, 0.0, -0.0, 1.0, 0.25])


@pytest.mark.parametrize("seed", range(8))
def test_numpy_zero_one_values_are_the_kernels_to_the_last_bit(seed):
    """The default fit's certificate and predictions take the zero-one values from numpy so as
    not to compile :func:`advgame._kernels.zero_one_set`; the numbers must be the kernel's:
    random, tied (quarters), huge, tiny, infinite and NaN potentials, one to 400 rows."""
    rng = np.random.default_rng(seed)
    for trial in range(200):
        k, n = int(rng.integers(1, 14)), int(rng.choice([1, 2, int(rng.integers(1, 400))]))
        F = [
            rng.standard_normal((n, k)) * 10.0 ** rng.integers(-5, 6),
            rng.integers(-8, 8, (n, k)) / 4.0,
            rng.choice(SPECIALS, (n, k)),
            np.where(
                rng.random((n, k)) < 0.2, rng.choice(SPECIALS, (n, k)), rng.normal(size=(n, k))
            ),
        ][trial % 4]
        weight = float(rng.choice([1.0, 0.4, 3.0]))
        FT = np.ascontiguousarray(F.T)
        with np.errstate(all="ignore"):
            expected = _kernels.zero_one_set(FT, weight)[0]
        got = _kernels.zero_one_value(FT if trial % 2 else F.T, weight)
        nan = np.isnan(expected)
        np.testing.assert_array_equal(np.isnan(got), nan)
        assert np.array_equal(got[~nan], expected[~nan])
        assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))


@pytest.mark.slow
def test_first_fit_with_an_empty_numba_cache(tmp_path):
    """Every kernel of the default fit and its predictions compiles from scratch and gives the
    numbers of the cached kernels."""
    code = (
        "import json, numpy as np, advgame as ag\n"
        "from sklearn.datasets import load_digits\n"
        "from sklearn.preprocessing import StandardScaler\n"
        "X, y = load_digits(return_X_y=True)\n"
        "X = StandardScaler().fit_transform(X)\n"
        "model = ag.AdversarialClassifier().fit(X, y)\n"
        "numbers = np.concatenate([model.coef_.ravel(), model.predict_proba(X).ravel()])\n"
        "print(json.dumps(numbers.tolist()))"
    )
    fresh = np.array(json.loads(_fresh(code, {"NUMBA_CACHE_DIR": str(tmp_path)}).splitlines()[-1]))
    assert any(tmp_path.rglob("*.nbi")), "the kernels were not cached"
    cached = np.array(json.loads(_fresh(code, {"NUMBA_CACHE_DIR": str(tmp_path)}).splitlines()[-1]))
    np.testing.assert_array_equal(fresh, cached)
