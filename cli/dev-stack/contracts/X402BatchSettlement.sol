// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

import {BatchSettlementSignatures} from "./BatchSettlementSignatures.sol";

/// Moves a deposit from the payer into x402BatchSettlement (ERC3009DepositCollector, Permit2DepositCollector).
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external;
}

interface IERC20Balance {
    function balanceOf(address account) external view returns (uint256);
}

/// The x402 `batch-settlement` payment channels for the embedded local chain, placed with anvil_setCode at the
/// address the x402 EVM package names (0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003). Written for this project to the
/// ABI the package calls and to the scheme's EVM specification:
/// - a channel is an immutable ChannelConfig; its id is the EIP-712 hash of that config under the domain
///   "x402 Batch Settlement" / "1" (chain id, this contract), so the same config differs across chains;
/// - `deposit` pulls tokens through a collector and checks that exactly `amount` arrived here;
/// - the payer (or its payerAuthorizer, an EOA) signs cumulative Vouchers; the receiver side records claims of them
///   (`claim` as receiver or receiverAuthorizer, `claimWithSignature` relayed with the receiverAuthorizer's
///   ClaimBatch signature); a claim at or below what is already claimed changes nothing;
/// - `settle` sends a receiver everything claimed for it and not yet sent, in one transfer;
/// - the receiver side refunds unclaimed escrow (`refund`, or `refundWithSignature` with a Refund signature and the
///   channel's refund nonce, which every refund advances first);
/// - the payer's escape hatch: `initiateWithdraw`, then `finalizeWithdraw` once the channel's withdrawDelay passed.
/// The config, voucher and claim structs, the EIP-712 hashing and the signature checks are in
/// BatchSettlementSignatures.sol. No constructor, no immutables: the domain separator is computed from block.chainid
/// at each call, and the reentrancy guard lives in transient storage (EIP-1153).
contract x402BatchSettlement is BatchSettlementSignatures {
    struct ChannelState {
        uint128 balance; // deposited less refunds and withdrawals (claimed funds stay counted here)
        uint128 totalClaimed;
    }

    struct WithdrawalState {
        uint128 amount;
        uint40 initiatedAt; // zero: none pending
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    mapping(bytes32 channelId => ChannelState) public channels;
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(bytes32 channelId => WithdrawalState) public pendingWithdrawals;
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    bool private transient entered;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount);

    error ClaimExceedsBalance();
    error ClaimExceedsCeiling();
    error DepositCollectionFailed();
    error DepositOverflow();
    error EmptyBatch();
    error InvalidChannel();
    error InvalidCollector();
    error InvalidRefundNonce();
    error InvalidSignature();
    error NotAuthorizedToClaim();
    error NotAuthorizedToRefund();
    error NotAuthorizedToWithdraw();
    error NotReceiverAuthorizer();
    error NothingToWithdraw();
    error ReentrancyGuardReentrantCall();
    error TransferFailed();
    error WithdrawAmountExceedsAvailable();
    error WithdrawDelayNotElapsed();
    error WithdrawDelayOutOfRange();
    error WithdrawalAlreadyPending();
    error WithdrawalNotPending();
    error ZeroDeposit();
    error ZeroRefund();

    modifier nonReentrant() {
        if (entered) revert ReentrancyGuardReentrantCall();
        entered = true;
        _;
        entered = false;
    }

    /// Runs each call on this contract in turn (delegatecall), all or nothing: a facilitator claims and refunds in
    /// one transaction this way.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; ++i) {
            (bool ok, bytes memory result) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(result, 0x20), mload(result))
                }
            }
            results[i] = result;
        }
    }

    /// Adds `amount` to the channel, pulled by `collector` (which reads its own `collectorData`). Whatever the
    /// collector does, exactly `amount` must have arrived here.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0)
        ) revert InvalidChannel();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange();
        }
        if (amount == 0) revert ZeroDeposit();
        if (collector == address(0)) revert InvalidCollector();
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        uint128 previous = channel.balance;
        if (amount > type(uint128).max - previous) revert DepositOverflow();
        channel.balance = previous + amount;

        uint256 held = IERC20Balance(config.token).balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (IERC20Balance(config.token).balanceOf(address(this)) != held + amount) revert DepositCollectionFailed();

        if (previous == 0 && channel.totalClaimed == 0) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, channel.balance);
    }

    /// Records claims sent by the receiver side itself: the caller is each row's receiver or receiverAuthorizer.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyBatch();
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            ChannelConfig calldata config = voucherClaims[i].voucher.channel;
            if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) {
                revert NotAuthorizedToClaim();
            }
            _claim(voucherClaims[i]);
        }
    }

    /// Records claims relayed by anyone, with the ClaimBatch signature of the receiverAuthorizer all rows share.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        if (!_isValidSignature(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature)) {
            revert InvalidSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; ++i) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert NotReceiverAuthorizer();
            _claim(voucherClaims[i]);
        }
    }

    /// Sends `receiver` all it has claimed in `token` and not yet received. Anyone may call it; nothing to send is
    /// not an error (and emits nothing).
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage state = receivers[receiver][token];
        uint128 amount = state.totalClaimed - state.totalSettled;
        if (amount == 0) return;
        state.totalSettled = state.totalClaimed;
        _transfer(token, receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    /// The payer side starts a timed withdrawal of at most the unclaimed escrow; the receiver side may still claim
    /// until it is finalized.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) revert NotAuthorizedToWithdraw();
        if (amount == 0) revert NothingToWithdraw();
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        if (withdrawal.initiatedAt != 0) revert WithdrawalAlreadyPending();
        ChannelState storage channel = channels[channelId];
        if (amount > channel.balance - channel.totalClaimed) revert WithdrawAmountExceedsAvailable();
        withdrawal.amount = amount;
        withdrawal.initiatedAt = uint40(block.timestamp);
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp) + config.withdrawDelay);
    }

    /// After the channel's withdrawDelay, sends the payer the pending amount, capped to what is still unclaimed.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) revert NotAuthorizedToWithdraw();
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        if (withdrawal.initiatedAt == 0) revert WithdrawalNotPending();
        if (block.timestamp < uint256(withdrawal.initiatedAt) + config.withdrawDelay) revert WithdrawDelayNotElapsed();
        ChannelState storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        uint128 amount = withdrawal.amount < available ? withdrawal.amount : available;
        delete pendingWithdrawals[channelId];
        channel.balance -= amount;
        emit WithdrawFinalized(channelId, msg.sender, amount);
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId, config);
        if (amount > 0) _transfer(config.token, config.payer, amount);
    }

    /// Cooperative refund by the receiver side itself (receiver or receiverAuthorizer).
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotAuthorizedToRefund();
        _refund(config, getChannelId(config), amount);
    }

    /// Cooperative refund relayed by anyone, with the receiverAuthorizer's Refund signature for the current nonce.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        bytes32 digest = getRefundDigest(channelId, nonce, amount);
        if (!_isValidSignature(config.receiverAuthorizer, digest, receiverAuthorizerSignature)) {
            revert InvalidSignature();
        }
        _refund(config, channelId, amount);
    }

    /// Raises the channel's claimed total to the row's, within the voucher's ceiling and the channel's balance,
    /// and credits the difference to the receiver. A row at or below the claimed total is already applied.
    function _claim(VoucherClaim calldata row) private {
        ChannelConfig calldata config = row.voucher.channel;
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        uint128 claimed = channel.totalClaimed;
        if (row.totalClaimed <= claimed) return;
        if (row.totalClaimed > row.voucher.maxClaimableAmount) revert ClaimExceedsCeiling();
        if (row.totalClaimed > channel.balance) revert ClaimExceedsBalance();
        bytes32 digest = getVoucherDigest(channelId, row.voucher.maxClaimableAmount);
        bool signed = config.payerAuthorizer != address(0)
            ? _recover(digest, row.signature) == config.payerAuthorizer
            : _isValidSignature(config.payer, digest, row.signature);
        if (!signed) revert InvalidSignature();
        uint128 delta = row.totalClaimed - claimed;
        channel.totalClaimed = row.totalClaimed;
        receivers[config.receiver][config.token].totalClaimed += delta;
        emit Claimed(channelId, msg.sender, delta, row.totalClaimed);
    }

    /// Advances the refund nonce first (even when nothing is left to refund), then returns up to `amount` of the
    /// unclaimed escrow to the payer, lowering (or cancelling) a pending withdrawal by what was refunded.
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        if (amount == 0) revert ZeroRefund();
        refundNonce[channelId] += 1;
        ChannelState storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        uint128 refunded = amount < available ? amount : available;
        if (refunded == 0) return;
        channel.balance -= refunded;
        WithdrawalState storage withdrawal = pendingWithdrawals[channelId];
        if (withdrawal.initiatedAt != 0) {
            if (refunded >= withdrawal.amount) delete pendingWithdrawals[channelId];
            else withdrawal.amount -= refunded;
        }
        emit Refunded(channelId, msg.sender, refunded);
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId, config);
        _transfer(config.token, config.payer, refunded);
    }

    /// The call must succeed and return nothing or true.
    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory data) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        if (!ok || (data.length != 0 && (data.length < 32 || uint256(bytes32(data)) != 1))) revert TransferFailed();
    }
}
