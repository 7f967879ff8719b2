import { getAddressDecoder, type Address } from "@solana/kit";
import {
  getMintDecoder,
  getMintSize,
  getTokenDecoder,
  getTokenSize,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import type { LiteSVM } from "litesvm";

const TOKEN_2022_PROGRAM_ADDRESS = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
/** An address lookup table's addresses follow its 56-byte header. */
const LOOKUP_TABLE_HEADER_SIZE = 56;
const tokenDecoder = getTokenDecoder();
const mintDecoder = getMintDecoder();
const addressDecoder = getAddressDecoder();

/** A token account's balance, as a node lists it in a transaction's meta (by the account's index in its keys). */
export interface TokenBalance {
  accountIndex: number;
  mint: Address;
  owner: Address;
  programId: Address;
  amount: bigint;
  decimals: number;
}

/** What the validator's ledger reads from LiteSVM's accounts around a transaction. */
export class SolanaAccounts {
  private readonly decimals = new Map<Address, number>();

  constructor(private readonly svm: LiteSVM) {}

  /** The addresses a v0 transaction loads from lookup tables; a missing table loads none (LiteSVM refuses it). */
  loadedAddresses(
    lookups: readonly {
      lookupTableAddress: Address;
      writableIndexes: readonly number[];
      readonlyIndexes: readonly number[];
    }[],
  ) {
    const writable: Address[] = [];
    const readonly: Address[] = [];
    for (const lookup of lookups) {
      const table = this.svm.getAccount(lookup.lookupTableAddress as never);
      if (!table.exists) continue;
      const at = (index: number) => addressDecoder.decode(table.data, LOOKUP_TABLE_HEADER_SIZE + 32 * index) as Address;
      writable.push(...lookup.writableIndexes.map(at));
      readonly.push(...lookup.readonlyIndexes.map(at));
    }
    return { writable, readonly };
  }

  /** Each account's lamports, and the token accounts' amounts (one read each: litesvm's reads are not cheap). */
  balances(addresses: Address[]): { lamports: bigint[]; tokens: TokenBalance[] } {
    const lamports: bigint[] = [];
    const tokens: TokenBalance[] = [];
    addresses.forEach((address, accountIndex) => {
      const account = this.svm.getAccount(address as never);
      lamports.push(account.exists ? account.lamports : 0n);
      if (!account.exists) return;
      const programId = account.programAddress as string as Address;
      const { data } = account;
      const isTokenAccount =
        (programId === TOKEN_PROGRAM_ADDRESS && data.length === getTokenSize()) ||
        // Token-2022 accounts with extensions are longer, and say which kind they are after the base layout.
        (programId === TOKEN_2022_PROGRAM_ADDRESS &&
          (data.length === getTokenSize() || (data.length > getTokenSize() && data[getTokenSize()] === 2)));
      if (!isTokenAccount) return;
      const token = tokenDecoder.decode(data.subarray(0, getTokenSize()));
      tokens.push({
        accountIndex,
        mint: token.mint,
        owner: token.owner,
        programId,
        amount: token.amount,
        decimals: this.decimalsOf(token.mint),
      });
    });
    return { lamports, tokens };
  }

  /** A mint's decimals never change once it is initialized. */
  private decimalsOf(mint: Address): number {
    let decimals = this.decimals.get(mint);
    if (decimals === undefined) {
      const account = this.svm.getAccount(mint as never);
      if (!account.exists) return 0;
      decimals = mintDecoder.decode(account.data.subarray(0, getMintSize())).decimals;
      this.decimals.set(mint, decimals);
    }
    return decimals;
  }
}
