// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// The data and the signatures of x402 `batch-settlement`, as x402BatchSettlement (which inherits this) checks them:
/// the channel config, voucher and claim structs of its ABI, and the EIP-712 hashing of the domain "x402 Batch Settlement" /
/// "1" for channel ids, payer Vouchers, receiver-authorizer Refunds and ClaimBatches, with the type strings the x402
/// EVM package signs. The domain separator is computed from block.chainid at each call (no immutables).
abstract contract BatchSettlementSignatures {
    struct ChannelConfig {
        address payer;
        address payerAuthorizer; // signs vouchers (ECDSA); zero: the payer signs (ECDSA or ERC-1271)
        address receiver;
        address receiverAuthorizer; // authorizes claims and refunds; never zero
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature; // the payer side's signature of the Voucher
        uint128 totalClaimed; // cumulative, at most the voucher's ceiling
    }

    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 public constant CHANNEL_CONFIG_TYPEHASH =
        keccak256(
            "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
        );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH =
        keccak256(
            "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
        );
    // secp256k1n / 2: signatures with a larger s are malleable copies (EIP-2).
    uint256 private constant HALF_CURVE_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    EIP712_DOMAIN_TYPEHASH,
                    keccak256("x402 Batch Settlement"),
                    keccak256("1"),
                    block.chainid,
                    address(this)
                )
            );
    }

    /// The EIP-712 hash of the config under this contract's domain.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// ClaimBatch{claims: ClaimEntry[]}, one entry (channel id, voucher ceiling, claimed total) per row; as EIP-712
    /// wants, the array is the hash of its entries' struct hashes laid end to end.
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            VoucherClaim calldata row = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(row.voucher.channel),
                    row.voucher.maxClaimableAmount,
                    row.totalClaimed
                )
            );
        }
        return _digest(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    function _digest(bytes32 structHash) internal view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    /// ECDSA for accounts without code, ERC-1271 for contract accounts.
    function _isValidSignature(address signer, bytes32 digest, bytes calldata signature) internal view returns (bool) {
        if (signer.code.length > 0) {
            (bool ok, bytes memory result) = signer.staticcall(abi.encodeWithSelector(0x1626ba7e, digest, signature));
            return ok && result.length >= 32 && bytes4(bytes32(result)) == 0x1626ba7e;
        }
        address recovered = _recover(digest, signature);
        return recovered != address(0) && recovered == signer;
    }

    /// The signer of a 65-byte (r, s, v) signature with a low s, or the zero address.
    function _recover(bytes32 digest, bytes calldata signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        (bytes32 r, bytes32 s) = abi.decode(signature, (bytes32, bytes32));
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_CURVE_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }
}
