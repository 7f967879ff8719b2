import { lamports, type Address } from "@solana/kit";
import {
  AccountState,
  findAssociatedTokenPda,
  getMintEncoder,
  getMintSize,
  getTokenEncoder,
  getTokenSize,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { LiteSVM } from "litesvm";
import type { SvmNetwork } from "../../networks";
import { PAYER_STARTING_BALANCE } from "./dev-accounts";
import { listen, readJson, sendJson } from "../lib/json-http-server";
import { SolanaJournal } from "./solana-journal";
import { LandedTransactions } from "./landed-transactions";
import { RpcError, solanaRpcMethods } from "./solana-rpc";

export interface LocalSolana {
  rpcUrl: string;
  stop(): Promise<void>;
}

/** SOL given to the facilitator's fee payer: far more than the fees of any local session. */
const FEE_PAYER_LAMPORTS = 1_000n * 1_000_000_000n;

/**
 * The embedded Solana validator: LiteSVM holding a USDC mint at the network's canonical mint address (6
 * decimals, as on mainnet), token accounts for the pay-to and each payer (funded with the starting balance), SOL
 * for the fee payer, and a JSON-RPC endpoint over it serving what the official x402 client and facilitator call.
 * With `stateFile`, every transaction it includes is journaled there, and an existing journal is replayed after
 * the setup, so that balances, statuses, history and the slot are those it had when it stopped.
 */
export async function startLocalSolana(options: {
  network: SvmNetwork;
  port: number;
  feePayer: string;
  payTo: string;
  payers: string[];
  stateFile?: string;
}): Promise<LocalSolana> {
  // The native mint (wrapped SOL) exists on every cluster; with it, a transfer of another token can be signed.
  const svm = new LiteSVM().withNativeMints().withTransactionHistory(100_000n);
  const mint = options.network.usdc.address as Address;
  const supply = PAYER_STARTING_BALANCE * BigInt(options.payers.length);
  writeAccount(
    svm,
    mint,
    getMintEncoder().encode({
      mintAuthority: null,
      supply,
      decimals: options.network.usdc.decimals,
      isInitialized: true,
      freezeAuthority: null,
    }),
    getMintSize(),
  );
  const holders = [
    { owner: options.payTo, amount: 0n },
    ...options.payers.map((owner) => ({ owner, amount: PAYER_STARTING_BALANCE })),
  ];
  for (const { owner, amount } of holders) {
    const [tokenAccount] = await findAssociatedTokenPda({
      mint,
      owner: owner as Address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const data = getTokenEncoder().encode({
      mint,
      owner: owner as Address,
      amount,
      delegate: null,
      state: AccountState.Initialized,
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null,
    });
    writeAccount(svm, tokenAccount, data, getTokenSize());
  }
  svm.airdrop(options.feePayer as Address, lamports(FEE_PAYER_LAMPORTS));

  const landed = new LandedTransactions(svm, options.stateFile ? new SolanaJournal(options.stateFile) : undefined);
  landed.replay();
  const call = solanaRpcMethods(svm, options.network, landed);
  const server = await listen(
    async (request, response) => {
      if (request.method !== "POST") return sendJson(response, 405, { error: "JSON-RPC over POST" });
      let message: { id?: unknown; method?: unknown; params?: unknown };
      try {
        message = (await readJson(request)) as typeof message;
      } catch {
        return sendJson(response, 200, rpcError(null, -32700, "Parse error"));
      }
      const id = message.id ?? null;
      if (typeof message.method !== "string") return sendJson(response, 200, rpcError(id, -32600, "Invalid request"));
      try {
        const params = Array.isArray(message.params) ? message.params : [];
        sendJson(response, 200, { jsonrpc: "2.0", id, result: call(message.method, params) });
      } catch (error) {
        const code = error instanceof RpcError ? error.code : -32603;
        sendJson(response, 200, rpcError(id, code, (error as Error).message));
      }
    },
    options.port,
    "local Solana validator",
  );
  return { rpcUrl: server.url, stop: server.stop };
}

function writeAccount(svm: LiteSVM, address: Address, data: ArrayLike<number>, size: number): void {
  // litesvm declares its parameters with @solana/kit 8's types and @x402/svm pins kit 5: the shapes are the same
  // (branded strings and bigints), the brands are not, hence the cast.
  svm.setAccount({
    address,
    data: Uint8Array.from(data),
    executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(size))),
    programAddress: TOKEN_PROGRAM_ADDRESS,
    space: BigInt(size),
  } as never);
}

function rpcError(id: unknown, code: number, message: string) {
  return { jsonrpc: "2.0", id, error: { code, message } };
}
