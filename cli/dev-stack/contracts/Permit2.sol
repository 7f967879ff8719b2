// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// The SignatureTransfer half of Uniswap's Permit2, for the embedded local chain, placed with anvil_setCode at the
/// canonical address 0x000000000022D473030F116dDEE9F6B43aC78BA3. Written for this project (the canonical bytecode
/// is not available offline) to be ABI- and signature-compatible with the canonical contract for what the x402
/// `upto` (and Permit2 `exact`) scheme uses: the same EIP-712 domain (name "Permit2", chainId, verifyingContract;
/// no version), the same type strings and struct hashing, unordered nonces in a bitmap, the same checks in the same
/// order and the same custom errors. The AllowanceTransfer half and the batch transfers are left out: nothing of
/// ours calls them.
/// No constructor state and no immutables: the domain separator is computed from block.chainid at each call.
contract Permit2 {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant HASHED_NAME = keccak256("Permit2");
    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    bytes32 private constant PERMIT_TRANSFER_FROM_TYPEHASH =
        keccak256(
            "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)TokenPermissions(address token,uint256 amount)"
        );
    /// The witness variant's type string is this stub followed by the caller's `witnessTypeString`, e.g.
    /// "Witness witness)TokenPermissions(address token,uint256 amount)Witness(...)".
    string private constant PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";
    bytes32 private constant UPPER_BIT_MASK = 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff;

    /// owner => word position => bitmap of used (or invalidated) unordered nonces.
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    error SignatureExpired(uint256 signatureDeadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidNonce();
    error InvalidSignatureLength();
    error InvalidSignature();
    error InvalidSigner();
    error InvalidContractSignature();

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, HASHED_NAME, block.chainid, address(this)));
    }

    /// Transfers `transferDetails.requestedAmount` (at most the permitted amount) of the permitted token from
    /// `owner`, who signed `permit` naming the caller as spender.
    function permitTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 dataHash = keccak256(
            abi.encode(
                PERMIT_TRANSFER_FROM_TYPEHASH,
                _hashTokenPermissions(permit.permitted),
                msg.sender,
                permit.nonce,
                permit.deadline
            )
        );
        _permitTransferFrom(permit, transferDetails, owner, dataHash, signature);
    }

    /// As permitTransferFrom, with extra data (`witness`, the EIP-712 hash of a struct whose type the caller
    /// describes in `witnessTypeString`) included in the signed message.
    function permitWitnessTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash = keccak256(abi.encodePacked(PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB, witnessTypeString));
        bytes32 dataHash = keccak256(
            abi.encode(
                typeHash,
                _hashTokenPermissions(permit.permitted),
                msg.sender,
                permit.nonce,
                permit.deadline,
                witness
            )
        );
        _permitTransferFrom(permit, transferDetails, owner, dataHash, signature);
    }

    /// Marks the nonces of `mask` in word `wordPos` of the caller's bitmap as used.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    function _permitTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 dataHash,
        bytes calldata signature
    ) private {
        uint256 requestedAmount = transferDetails.requestedAmount;
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _useUnorderedNonce(owner, permit.nonce);
        _verify(signature, keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), dataHash)), owner);
        _safeTransferFrom(permit.permitted.token, owner, transferDetails.to, requestedAmount);
    }

    function _hashTokenPermissions(TokenPermissions memory permitted) private pure returns (bytes32) {
        return keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permitted.token, permitted.amount));
    }

    /// Nonce n is bit (n & 0xff) of word (n >> 8); using it flips the bit, which must have been clear.
    function _useUnorderedNonce(address from, uint256 nonce) private {
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = nonceBitmap[from][nonce >> 8] ^= bit;
        if (flipped & bit == 0) revert InvalidNonce();
    }

    /// ECDSA for accounts without code: 65-byte (r, s, v) or 64-byte EIP-2098 compact (r, vs) signatures, recovered
    /// with ecrecover exactly as the canonical contract does (which also means it does not refuse a high `s`);
    /// ERC-1271 for contract accounts.
    function _verify(bytes calldata signature, bytes32 hash, address claimedSigner) private view {
        if (claimedSigner.code.length == 0) {
            bytes32 r;
            bytes32 s;
            uint8 v;
            if (signature.length == 65) {
                (r, s) = abi.decode(signature, (bytes32, bytes32));
                v = uint8(signature[64]);
            } else if (signature.length == 64) {
                bytes32 vs;
                (r, vs) = abi.decode(signature, (bytes32, bytes32));
                s = vs & UPPER_BIT_MASK;
                v = uint8(uint256(vs >> 255)) + 27;
            } else {
                revert InvalidSignatureLength();
            }
            address signer = ecrecover(hash, v, r, s);
            if (signer == address(0)) revert InvalidSignature();
            if (signer != claimedSigner) revert InvalidSigner();
        } else {
            (bool ok, bytes memory result) = claimedSigner.staticcall(
                abi.encodeWithSelector(0x1626ba7e, hash, signature)
            );
            if (!ok || result.length < 32 || bytes4(bytes32(result)) != 0x1626ba7e) revert InvalidContractSignature();
        }
    }

    /// Like solmate's SafeTransferLib: the call must succeed and return nothing or true.
    function _safeTransferFrom(address token, address from, address to, uint256 amount) private {
        (bool ok, bytes memory data) = token.call(abi.encodeWithSelector(0x23b872dd, from, to, amount));
        require(ok && (data.length == 0 || (data.length > 31 && uint256(bytes32(data)) == 1)), "TRANSFER_FROM_FAILED");
    }
}
