// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A contract wallet of the development chain, for tests of payers that are contracts: one owner key, and ERC-1271's
/// isValidSignature saying yes to that key's signatures of a hash (and to nothing else), as smart accounts do.
contract OwnedWallet {
    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;
    bytes4 private constant ERC1271_NO = 0xffffffff;
    /// Half the curve's order: a higher s is the malleable twin of a signature, refused as OpenZeppelin's ECDSA does.
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return ERC1271_NO;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_ORDER || (v != 27 && v != 28)) return ERC1271_NO;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? ERC1271_MAGIC : ERC1271_NO;
    }
}

/// Deploys OwnedWallets at addresses known before they exist (CREATE2 of the owner and a salt): a wallet not deployed
/// yet signs with ERC-6492, its signature wrapping the call of `deploy` that brings it into being.
contract OwnedWalletFactory {
    /// The wallet of `owner` under `salt`, deployed now unless it already is.
    function deploy(address owner, bytes32 salt) external returns (address wallet) {
        wallet = walletOf(owner, salt);
        if (wallet.code.length == 0) new OwnedWallet{salt: salt}(owner);
    }

    /// Where the wallet of `owner` under `salt` is, or will be.
    function walletOf(address owner, bytes32 salt) public view returns (address) {
        bytes32 code = keccak256(abi.encodePacked(type(OwnedWallet).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, code)))));
    }
}
