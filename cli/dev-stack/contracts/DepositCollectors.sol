// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

interface IERC3009Receive {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

interface IERC2612 {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// The part of Permit2's SignatureTransfer interface the Permit2 collector calls.
interface IPermit2Witness {
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

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

// The two deposit collectors of x402 `batch-settlement` for the embedded local chain, placed with anvil_setCode at
// the addresses the x402 EVM package names. Each is called only by x402BatchSettlement's `deposit` (so nobody can
// spend a payer's signed authorization elsewhere) and brings exactly `amount` of the token to it; the settlement
// contract checks that it arrived. Addresses are constants: no constructor, no immutables.
address constant X402_BATCH_SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

/// At 0x4020806089470a89826cB9fB1f4059150b550004. The payer signs an ERC-3009 ReceiveWithAuthorization naming this
/// collector as `to` (the token lets only `to` submit it), with the nonce keccak256(abi.encode(channelId, salt)),
/// so the authorization is bound to one channel. `collectorData` is abi.encode(validAfter, validBefore, salt,
/// signature); the tokens received are passed on to the settlement contract.
contract ERC3009DepositCollector {
    address public constant x402BatchSettlement = X402_BATCH_SETTLEMENT;

    error OnlyX402BatchSettlement();
    error TransferFailed();

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
    {
        if (msg.sender != X402_BATCH_SETTLEMENT) revert OnlyX402BatchSettlement();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(collectorData, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IERC3009Receive(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        (bool ok, bytes memory data) = token.call(abi.encodeWithSelector(0xa9059cbb, X402_BATCH_SETTLEMENT, amount));
        if (!ok || (data.length != 0 && (data.length < 32 || uint256(bytes32(data)) != 1))) revert TransferFailed();
    }
}

/// At 0x4020425FAf3B746C082C2f942b4E5159887B0005. The payer signs a Permit2 PermitWitnessTransferFrom of exactly
/// `amount` of the token, naming this collector as spender and the channel id as witness (DepositWitness); Permit2
/// moves the tokens from the payer straight to the settlement contract. `collectorData` is abi.encode(nonce,
/// deadline, permit2Signature, eip2612PermitData): when the last is not empty it is abi.encode(value, deadline, v,
/// r, s) of the payer's EIP-2612 permit of the token to Permit2, applied first (a failure is logged as an event and
/// ignored: an allowance may already be there, and Permit2's transfer decides).
contract Permit2DepositCollector {
    address public constant x402BatchSettlement = X402_BATCH_SETTLEMENT;
    IPermit2Witness public constant PERMIT2 = IPermit2Witness(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    /// Referenced types after the primary one in alphabetical order (DepositWitness < TokenPermissions).
    string public constant DEPOSIT_WITNESS_TYPE_STRING =
        "DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)";
    bytes32 public constant DEPOSIT_WITNESS_TYPEHASH = keccak256("DepositWitness(bytes32 channelId)");

    event EIP2612PermitFailed(address indexed token, address indexed owner, bytes reason);

    error OnlyX402BatchSettlement();
    error Permit2612AmountMismatch();

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
    {
        if (msg.sender != X402_BATCH_SETTLEMENT) revert OnlyX402BatchSettlement();
        (uint256 nonce, uint256 deadline, bytes memory signature, bytes memory permit2612) =
            abi.decode(collectorData, (uint256, uint256, bytes, bytes));
        if (permit2612.length > 0) _applyPermit(payer, token, amount, permit2612);
        PERMIT2.permitWitnessTransferFrom(
            IPermit2Witness.PermitTransferFrom({
                permitted: IPermit2Witness.TokenPermissions({token: token, amount: amount}),
                nonce: nonce,
                deadline: deadline
            }),
            IPermit2Witness.SignatureTransferDetails({to: X402_BATCH_SETTLEMENT, requestedAmount: amount}),
            payer,
            keccak256(abi.encode(DEPOSIT_WITNESS_TYPEHASH, channelId)),
            DEPOSIT_WITNESS_TYPE_STRING,
            signature
        );
    }

    function _applyPermit(address payer, address token, uint256 amount, bytes memory permit2612) private {
        (uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) =
            abi.decode(permit2612, (uint256, uint256, uint8, bytes32, bytes32));
        if (value != amount) revert Permit2612AmountMismatch();
        try IERC2612(token).permit(payer, address(PERMIT2), value, deadline, v, r, s) {}
        catch (bytes memory reason) {
            emit EIP2612PermitFailed(token, payer, reason);
        }
    }
}
