"""Lazy package attributes (PEP 562): a package's public names are imported on first access, so
importing the package loads none of the heavy libraries (scikit-learn, cvxpy, numba, scipy) its
modules need."""

from importlib import import_module

__all__ = ["lazy_attributes"]


def lazy_attributes(package, homes, public):
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    Parameters
    ----------
    package : dict
        The package's ``globals()``; a resolved name is stored there, so each is imported once.
    homes : dict
        Public name -> the module (relative to the package, e.g. ``".game"``) that defines it.
    public : list of str
        The package's ``__all__``, listed by ``dir()``.

    Any other name is looked up as a submodule (``advgame.exceptions``), which eager imports used
    to bind as a side effect; a name that is neither raises ``AttributeError``.
    """
    name_of_package = package["__name__"]

    def __getattr__(name):
        home = homes.get(name)
        if home is not None:
            value = getattr(import_module(home, name_of_package), name)
        elif name.startswith("__"):
            raise AttributeError(f"module {name_of_package!r} has no attribute {name!r}")
        else:
            try:
                value = import_module(f".{name}", name_of_package)
            except ModuleNotFoundError as exc:
                if exc.name != f"{name_of_package}.{name}":
                    raise
                raise AttributeError(
                    f"module {name_of_package!r} has no attribute {name!r}"
                ) from None
        package[name] = value
        return value

    def __dir__():
        return sorted({*package, *public})

    return __getattr__, __dir__
