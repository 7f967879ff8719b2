// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// The part of Permit2's SignatureTransfer interface the proxy calls (and whose structs its ABI names).
interface ISignatureTransfer {
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

interface IERC20Permit {
    function permit(
        address owner,
        address spender,
        uint256 value,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;
}

/// The x402 `upto` settlement proxy for the embedded local chain, placed with anvil_setCode at the address the
/// x402 EVM package names (x402UptoPermit2ProxyAddress, 0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002). Written for
/// this project to the ABI the package ships (x402UptoPermit2ProxyABI: the same functions, structs, events and
/// errors) and to the behaviour the `upto` scheme specifies:
/// - the payer signs a Permit2 PermitWitnessTransferFrom naming this proxy as spender, the permitted amount as the
///   most that may be taken, and a witness binding the recipient, the one facilitator allowed to settle, and the
///   earliest settlement time;
/// - the named facilitator settles any `amount` up to that maximum (0 uses the signature up without moving funds),
///   always to the witness's recipient; Permit2 checks the signature, the deadline and the single-use nonce;
/// - `settleWithPermit` first applies the payer's EIP-2612 permit of the token to Permit2 (ignored if it fails, as
///   an allowance may already be there), then settles the same way.
/// Permit2's address is a constant (no immutables, no storage to initialise).
contract x402UptoPermit2Proxy {
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    struct EIP2612Permit {
        uint256 value;
        uint256 deadline;
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    /// Types after the primary one in alphabetical order (TokenPermissions < Witness), as EIP-712 wants.
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    bool private transient entered;

    event Settled();
    event SettledWithPermit();

    error AmountExceedsPermitted();
    error InvalidDestination();
    error InvalidOwner();
    error InvalidPermit2Address();
    error PaymentTooEarly();
    error Permit2612AmountMismatch();
    error ReentrancyGuardReentrantCall();
    error UnauthorizedFacilitator();

    modifier nonReentrant() {
        if (entered) revert ReentrancyGuardReentrantCall();
        entered = true;
        _;
        entered = false;
    }

    /// Settles `amount` (at most `permit.permitted.amount`) from `owner` to `witness.to`; the payer has already
    /// allowed Permit2 to move the token.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _authorize(permit, amount, witness);
        _settle(permit, amount, owner, witness, signature);
        emit Settled();
    }

    /// Applies the payer's EIP-2612 permit (allowing Permit2 exactly the permitted amount), then settles as `settle`.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _authorize(permit, amount, witness);
        if (permit2612.value != permit.permitted.amount) revert Permit2612AmountMismatch();
        try
            IERC20Permit(permit.permitted.token).permit(
                owner,
                address(PERMIT2),
                permit2612.value,
                permit2612.deadline,
                permit2612.v,
                permit2612.r,
                permit2612.s
            )
        {} catch {
            // Already used, or an allowance given otherwise: Permit2's transfer decides.
        }
        _settle(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _authorize(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        Witness calldata witness
    ) private view {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
    }

    function _settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        // The upper bound of the window is Permit2's deadline.
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        if (address(PERMIT2).code.length == 0) revert InvalidPermit2Address();
        bytes32 witnessHash = keccak256(
            abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter)
        );
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
