"""A JWS signer over a PEM private key, using ``cryptography`` (imported lazily).

Theory of operation
-------------------
``pem_signer(pem, alg)`` loads a PKCS#8 (or traditional) PEM private key and
returns ``(alg, sign)``: the JWS algorithm (inferred from the key when not
given: P-256 -> ES256, P-384 -> ES384, RSA -> RS256, Ed25519 -> EdDSA) and a
callable turning the JWS signing input into the raw signature.  ECDSA
signatures are converted from DER to the fixed-width ``r || s`` form JWS
wants (RFC 7518 section 3.4).

``DpopKey`` is the key pair of DPoP (RFC 9449): a fresh P-256 key
(``DpopKey.generate``) that signs ES256 proofs through the same signer, with
its public JWK for the proof header; ``to_pem``/``from_pem`` let it be kept
with the tokens it is bound to.

``cryptography`` is imported only here, only when a private key is
configured, so trimcp itself does not depend on it; without it a clear
``RuntimeError`` names the package to install.  Neither the PEM nor the key
appears in any message.
"""

from __future__ import annotations

import base64
from typing import Any

from ..._sansio.auth.assertion import SUPPORTED_ALGORITHMS, Signer

__all__ = ["DpopKey", "dpop_available", "pem_signer"]

_CURVES = {"secp256r1": ("ES256", 32), "secp384r1": ("ES384", 48)}


def _load(pem: str | bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "private_key_jwt needs the 'cryptography' package (pip install 'trimcp[oauth-jwt]')"
        ) from None
    data = pem.encode("ascii") if isinstance(pem, str) else pem
    try:
        return load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ValueError("the client's private key is not an unencrypted PEM private key") from None


def pem_signer(pem: str | bytes, alg: str | None = None) -> tuple[str, Signer]:
    """``(alg, sign)`` for a PEM private key; ``alg`` must suit the key type."""
    key = _load(pem)  # first: a missing 'cryptography' gets the friendly message
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    if alg is not None and alg not in SUPPORTED_ALGORITHMS:
        raise ValueError(f"unsupported client assertion algorithm {alg!r}")
    if isinstance(key, ec.EllipticCurvePrivateKey):
        found = _CURVES.get(key.curve.name)
        if found is None:
            raise ValueError(f"unsupported elliptic curve {key.curve.name!r} for a client assertion")
        natural, size = found
        if alg not in (None, natural):
            raise ValueError(f"a {key.curve.name} key signs {natural}, not {alg}")
        digest: hashes.HashAlgorithm = hashes.SHA256() if natural == "ES256" else hashes.SHA384()
        ec_key = key

        def sign_ec(data: bytes) -> bytes:
            r, s = decode_dss_signature(ec_key.sign(data, ec.ECDSA(digest)))
            return r.to_bytes(size, "big") + s.to_bytes(size, "big")

        return natural, sign_ec
    if isinstance(key, rsa.RSAPrivateKey):
        if alg not in (None, "RS256"):
            raise ValueError(f"an RSA key signs RS256 here, not {alg}")
        rsa_key = key

        def sign_rsa(data: bytes) -> bytes:
            return rsa_key.sign(data, padding.PKCS1v15(), hashes.SHA256())

        return "RS256", sign_rsa
    if isinstance(key, ed25519.Ed25519PrivateKey):
        if alg not in (None, "EdDSA"):
            raise ValueError(f"an Ed25519 key signs EdDSA, not {alg}")
        ed_key = key
        return "EdDSA", lambda data: ed_key.sign(data)
    raise ValueError(f"unsupported private key type {type(key).__name__} for a client assertion")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class DpopKey:
    """A DPoP key pair: ``alg``, the public ``jwk`` and ``sign`` (the private key stays inside)."""

    def __init__(self, pem: bytes) -> None:
        self._pem = pem
        self.alg, self.sign = pem_signer(pem, "ES256")
        key = _load(pem)
        numbers = key.public_key().public_numbers()
        self.jwk: dict[str, str] = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64url(numbers.x.to_bytes(32, "big")),
            "y": _b64url(numbers.y.to_bytes(32, "big")),
        }

    def __repr__(self) -> str:
        return f"<DpopKey {self.alg} x={self.jwk['x'][:8]}...>"

    @classmethod
    def generate(cls) -> DpopKey:
        """A fresh P-256 key (needs the optional ``cryptography`` package)."""
        _load_module()
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return cls(pem)

    @classmethod
    def from_pem(cls, pem: str) -> DpopKey:
        return cls(pem.encode("ascii"))

    def to_pem(self) -> str:
        return self._pem.decode("ascii")


def _load_module() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        raise RuntimeError("DPoP needs the 'cryptography' package (pip install 'trimcp[oauth-jwt]')") from None


def dpop_available() -> bool:
    """Whether DPoP keys can be made here (the optional ``cryptography`` is installed)."""
    try:
        import cryptography  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        return False
    return True
