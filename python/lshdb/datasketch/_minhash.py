"""``MinHash`` and ``LeanMinHash``, as datasketch has them, plus the set.

The signature (``hashvalues``) is computed exactly as datasketch computes it
(the same hash function, seed and permutations, so the values are equal to
datasketch's), and each sketch also keeps the set it was updated with: the
hashes of its tokens (the values of ``hashfunc``, 32-bit by default). That set is what
the LSH classes insert into lshdb, so their answers are verified on it, and
what :meth:`MinHash.jaccard` and :meth:`MinHash.count` answer from, exactly.
A sketch built from ``hashvalues`` alone has no set: it answers with
datasketch's estimates and cannot be indexed.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any, Callable, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

import numpy as np
import numpy.typing as npt

__all__ = ["MinHash", "LeanMinHash", "sha1_hash32"]

_MERSENNE_PRIME = np.uint64((1 << 61) - 1)
_MAX_HASH = np.uint64((1 << 32) - 1)
_HASH_RANGE = 1 << 32

U64 = npt.NDArray[np.uint64]


def sha1_hash32(data: bytes) -> int:
    """datasketch's default token hash: the first 4 bytes of SHA-1, little-endian."""
    value: int = struct.unpack("<I", hashlib.sha1(data).digest()[:4])[0]
    return value


def _permutations(seed: int, num_perm: int) -> U64:
    """datasketch's permutation parameters ``(a, b)`` for ``seed``, shape (2, num_perm)."""
    gen = np.random.RandomState(seed)
    pairs = [
        (gen.randint(1, _MERSENNE_PRIME, dtype=np.uint64), gen.randint(0, _MERSENNE_PRIME, dtype=np.uint64))
        for _ in range(num_perm)
    ]
    return np.array(pairs, dtype=np.uint64).reshape(num_perm, 2).T


def signature(hashes: Iterable[int], permutations: U64) -> U64:
    """The MinHash values of a set of 32-bit token hashes (all 2**32 - 1 for none)."""
    hv = np.fromiter(hashes, dtype=np.uint64)
    a, b = permutations
    out = np.full(a.shape[0], _MAX_HASH, dtype=np.uint64)
    for start in range(0, hv.size, 4096):  # bounded temporaries for large sets
        chunk = hv[start : start + 4096].reshape(-1, 1)
        phv = np.bitwise_and((chunk * a + b) % _MERSENNE_PRIME, _MAX_HASH)
        out = np.minimum(out, phv.min(axis=0))
    return out


class MinHash:
    """datasketch's ``MinHash`` that also keeps its set of token hashes.

    ``MinHash(num_perm=128, seed=1, hashfunc=sha1_hash32, hashobj=None,
    hashvalues=None, permutations=None, gpu_mode="disable", scheme=None)``
    (``hashobj`` and ``gpu_mode`` are accepted and ignored); ``update(b)``
    hashes a token (bytes with the default ``hashfunc``) and adds it.
    ``jaccard`` and ``count`` are exact over the kept sets; ``hashvalues``
    equal datasketch's in its ``scheme="legacy"`` (datasketch 2.0's default
    is ``"affine32"``, which raises ``NotImplementedError`` here).
    """

    def __init__(
        self,
        num_perm: int = 128,
        seed: int = 1,
        hashfunc: Callable[[Any], int] = sha1_hash32,
        hashobj: Optional[object] = None,
        hashvalues: Optional[Iterable[int]] = None,
        permutations: Optional[Any] = None,
        gpu_mode: str = "disable",
        scheme: Optional[str] = None,
    ) -> None:
        if scheme in ("affine32", "affine64"):
            raise NotImplementedError(
                f"scheme={scheme!r}: lshdb.datasketch computes the hash values of datasketch's "
                "'legacy' scheme (the only one before datasketch 2.0), not 2.0's affine schemes; "
                "the indexes' answers do not depend on it (they are verified on the kept sets)"
            )
        if scheme not in (None, "legacy"):
            raise ValueError(f"scheme must be 'affine32', 'affine64' or 'legacy', not {scheme!r}")
        #: datasketch's permutation scheme: always "legacy" here.
        self.scheme = "legacy"
        if hashvalues is not None:
            hashvalues = np.array(hashvalues, dtype=np.uint64)
            num_perm = len(hashvalues)
        if isinstance(num_perm, bool) or not isinstance(num_perm, (int, np.integer)):
            raise TypeError(f"num_perm must be an int, not {type(num_perm).__name__}")
        if num_perm < 1 or num_perm > _HASH_RANGE:
            raise ValueError(f"num_perm must be between 1 and {_HASH_RANGE}, not {num_perm}")
        if not callable(hashfunc):
            raise ValueError("The hashfunc must be a callable.")
        self.seed = seed
        self.hashfunc = hashfunc
        self._gpu_mode = gpu_mode  # kept for copies, as datasketch does; the CPU path runs
        self.permutations: U64 = (
            _permutations(seed, int(num_perm)) if permutations is None else np.asarray(permutations, dtype=np.uint64)
        )
        if self.permutations.shape != (2, int(num_perm)):
            raise ValueError("Numbers of hash values and permutations mismatch")
        self.hashvalues: U64 = (
            np.full(int(num_perm), _MAX_HASH, dtype=np.uint64) if hashvalues is None else hashvalues
        )
        # The set: None when built from hash values alone.
        self._set: Optional[Set[int]] = set() if hashvalues is None else None

    @property
    def num_perm(self) -> int:
        """The number of hash values."""
        return len(self.hashvalues)

    @property
    def tokens(self) -> Optional[FrozenSet[int]]:
        """The set this sketch stands for, as 32-bit token hashes; None when
        it was built from ``hashvalues`` alone."""
        return None if self._set is None else frozenset(self._set)

    def _hash(self, token: Any) -> int:
        hv = int(self.hashfunc(token))
        if not 0 <= hv < 1 << 64:
            raise ValueError(f"hashfunc must return an int in [0, 2**64), got {hv}")
        return hv

    def update(self, b: Any) -> None:
        """Adds one token (hashed with ``hashfunc``)."""
        self._add([self._hash(b)])

    def update_batch(self, b: Iterable[Any]) -> None:
        """Adds many tokens."""
        self._add([self._hash(x) for x in b])

    def _add(self, hashes: List[int]) -> None:
        if not hashes:
            return
        if self._set is not None:
            self._set.update(hashes)
        self.hashvalues = np.minimum(self.hashvalues, signature(hashes, self.permutations))

    def _check_compatible(self, other: "MinHash", what: str) -> None:
        if not isinstance(other, MinHash):
            raise TypeError(f"Cannot {what} a MinHash with {type(other).__name__}")
        if other.seed != self.seed:
            raise ValueError(f"Cannot {what} MinHash with different seeds")
        if len(self) != len(other):
            raise ValueError(f"Cannot {what} MinHash with different numbers of permutation functions")

    def jaccard(self, other: "MinHash") -> float:
        """The Jaccard similarity of the two sets: exact when both sketches
        keep their sets (they do unless built from ``hashvalues``), else
        datasketch's estimate (the fraction of equal hash values)."""
        self._check_compatible(other, "compute Jaccard of")
        if self._set is not None and other._set is not None:
            union = len(self._set | other._set)
            return 1.0 if union == 0 else len(self._set & other._set) / union
        return float(np.count_nonzero(self.hashvalues == other.hashvalues)) / float(len(self))

    def count(self) -> float:
        """The size of the set: exact when kept, else datasketch's estimate."""
        if self._set is not None:
            return float(len(self._set))
        return float(len(self)) / float(np.sum(self.hashvalues / float(_MAX_HASH))) - 1.0

    def merge(self, other: "MinHash") -> None:
        """Makes this sketch the union of both."""
        self._check_compatible(other, "merge")
        self.hashvalues = np.minimum(other.hashvalues, self.hashvalues)
        if self._set is not None and other._set is not None:
            self._set |= other._set
        else:
            self._set = None

    def digest(self) -> U64:
        """A copy of the hash values."""
        return np.array(self.hashvalues, copy=True)

    def is_empty(self) -> bool:
        """Whether nothing was added."""
        return not np.any(self.hashvalues != _MAX_HASH)

    def clear(self) -> None:
        """Forgets every token (a sketch from hash values gets an empty set)."""
        self.hashvalues = np.full(len(self), _MAX_HASH, dtype=np.uint64)
        self._set = set()

    def copy(self) -> "MinHash":
        """An independent copy (with its set)."""
        out = MinHash(
            seed=self.seed,
            hashfunc=self.hashfunc,
            hashvalues=self.digest(),
            permutations=self.permutations,
            gpu_mode=self._gpu_mode,
        )
        out._set = None if self._set is None else set(self._set)
        return out

    def __len__(self) -> int:
        return len(self.hashvalues)

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and isinstance(other, MinHash)
            and self.seed == other.seed
            and np.array_equal(self.hashvalues, other.hashvalues)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, as datasketch's

    @classmethod
    def union(cls, *mhs: "MinHash") -> "MinHash":
        """A new sketch of the union of two or more sketches."""
        if len(mhs) < 2:
            raise ValueError("Cannot union less than 2 MinHash")
        out = mhs[0].copy()
        for m in mhs[1:]:
            out.merge(m)
        return out

    @classmethod
    def bulk(cls, b: Iterable[Iterable[Any]], **minhash_kwargs: Any) -> List["MinHash"]:
        """One sketch per token list: ``MinHash.bulk([[b"a", b"b"], [b"c"]], num_perm=64)``."""
        return list(cls.generator(b, **minhash_kwargs))

    @classmethod
    def generator(cls, b: Iterable[Iterable[Any]], **minhash_kwargs: Any) -> Iterator["MinHash"]:
        """As :meth:`bulk`, lazily; the permutations are computed once."""
        proto = cls(**minhash_kwargs)
        for tokens in b:
            m = proto.copy()
            m.update_batch(tokens)
            yield m


class LeanMinHash(MinHash):
    """A frozen :class:`MinHash` (datasketch's ``LeanMinHash``): built from
    a ``MinHash`` (keeping its set) or from ``seed`` and ``hashvalues``;
    :meth:`update` raises ``TypeError``. Hashable, picklable."""

    def __init__(
        self, minhash: Optional[MinHash] = None, seed: Optional[int] = None, hashvalues: Optional[Iterable[int]] = None
    ) -> None:
        if minhash is not None:
            if not isinstance(minhash, MinHash):
                raise TypeError(f"LeanMinHash takes a MinHash, not {type(minhash).__name__}")
            super().__init__(seed=minhash.seed, hashvalues=minhash.digest(), permutations=minhash.permutations)
            self._set = None if minhash._set is None else set(minhash._set)
        elif seed is not None and hashvalues is not None:
            super().__init__(seed=seed, hashvalues=hashvalues)
        else:
            raise ValueError(
                "Init parameters cannot be None: make sure to set either minhash or both of hash values and seed"
            )

    def update(self, b: Any) -> None:
        """A LeanMinHash is frozen."""
        raise TypeError("Cannot update a LeanMinHash")

    def update_batch(self, b: Iterable[Any]) -> None:
        """A LeanMinHash is frozen."""
        raise TypeError("Cannot update a LeanMinHash")

    def clear(self) -> None:
        """A LeanMinHash is frozen."""
        raise TypeError("Cannot clear a LeanMinHash")

    def copy(self) -> "LeanMinHash":
        """An independent copy."""
        return LeanMinHash(self)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash((self.seed, bytes(self.hashvalues.data)))

    def bytesize(self, byteorder: str = "@") -> int:
        """The size of :meth:`serialize`'s output: datasketch's format (seed,
        length, 32-bit hash values), which holds no set."""
        return struct.calcsize(byteorder + "q") + struct.calcsize(byteorder + "i") + len(self) * 4

    def serialize(self, buf: Any, byteorder: str = "@") -> None:
        """Writes datasketch's serialized form into the buffer ``buf``."""
        if len(buf) < self.bytesize(byteorder):
            raise ValueError("The buffer does not have enough space for holding this MinHash.")
        fmt = "%sqi%dI" % (byteorder, len(self))
        struct.pack_into(fmt, buf, 0, self.seed, len(self), *(int(v) for v in self.hashvalues))

    @classmethod
    def deserialize(cls, buf: Any, byteorder: str = "@") -> "LeanMinHash":
        """Reads datasketch's serialized form: a sketch without its set (it
        estimates, and cannot be indexed)."""
        seed, num_perm = struct.unpack_from(byteorder + "qi", buf, 0)
        offset = struct.calcsize(byteorder + "qi")
        hashvalues = struct.unpack_from(byteorder + "%dI" % num_perm, buf, offset)
        return cls(seed=seed, hashvalues=hashvalues)


def item_set(minhash: Any, num_perm: int, what: str) -> Tuple[int, ...]:
    """The set an LSH class indexes or queries for ``minhash``, checked:
    a :class:`MinHash` of ``num_perm`` values that keeps its set."""
    if not isinstance(minhash, MinHash):
        raise TypeError(f"{what}: expected an lshdb.datasketch.MinHash, not {type(minhash).__name__}")
    if len(minhash) != num_perm:
        raise ValueError(f"Expecting minhash with length {num_perm}, got {len(minhash)}")
    if minhash._set is None:
        raise ValueError(
            f"{what}: this MinHash was built from hash values alone and has no set to index or verify; "
            "build it with update() or update_batch()"
        )
    return tuple(minhash._set)
