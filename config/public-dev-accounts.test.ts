import { getBase58Decoder, getBase58Encoder } from "@solana/kit";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { devAccount, devAccountsFor, DEV_MNEMONIC } from "../cli/dev-stack/dev-accounts";
import { solanaDevAccount } from "../cli/dev-stack/solana-dev-accounts";
import { getNetwork } from "../networks";
import { PUBLIC_DEVELOPMENT_ADDRESSES, publicAddressProblem, publicKeyProblem } from "./public-dev-accounts";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const indexes = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];

describe("the public development accounts production refuses", () => {
  it("list the first 10 accounts of the public mnemonic and every Solana development keypair", async () => {
    expect(DEV_MNEMONIC).toBe("test test test test test test test test test test test junk");
    const evm = indexes.map((index) => devAccount(index).address);
    const solana = await Promise.all(indexes.map(async (index) => (await solanaDevAccount(index)).address));
    expect([...PUBLIC_DEVELOPMENT_ADDRESSES].sort()).toEqual([...evm, ...solana].sort());
  });

  it("include every account the development stack hands out, on every network kind", async () => {
    for (const network of [getNetwork("eip155:137"), getNetwork(SOLANA)]) {
      const { facilitator, payTo, payers } = await devAccountsFor(network);
      for (const account of [facilitator, payTo, ...payers]) {
        expect(publicAddressProblem("PAY_TO", account.address), account.address).toMatch(/^PAY_TO: /);
        expect(publicKeyProblem("FACILITATOR_PRIVATE_KEY", account.privateKey), account.address).toMatch(
          /^FACILITATOR_PRIVATE_KEY: is the key of /,
        );
      }
    }
  });

  it("are matched whatever the case of a hex address, and named in one line without the key", () => {
    const { address, privateKey } = devAccount(1);
    expect(publicAddressProblem("PAY_TO", address.toLowerCase())).toBe(
      `PAY_TO: ${address.toLowerCase()} is account 1 of the public development mnemonic "test test ... junk", whose private key is public: anyone could take what is paid to it; set an address of your own`,
    );
    const problem = publicKeyProblem("FACILITATOR_PRIVATE_KEY", privateKey.toUpperCase().replace("0X", "0x"))!;
    expect(problem).toContain(`account 1 of the public development mnemonic`);
    expect(problem).not.toContain(privateKey.slice(2));
    expect(problem.split("\n")).toHaveLength(1);
  });

  it("are found by the address a Solana key's seed derives, whatever public key the keypair carries", async () => {
    const { address, privateKey } = await solanaDevAccount(0);
    const keypair = new Uint8Array(getBase58Encoder().encode(privateKey));
    keypair.set(new Uint8Array(32).fill(7), 32);
    const problem = publicKeyProblem("FACILITATOR_PRIVATE_KEY", getBase58Decoder().decode(keypair));
    expect(problem).toContain(`development keypair 0 of paysvc's embedded Solana validator (${address})`);
  });

  it("leave any other account alone", () => {
    const key = generatePrivateKey();
    expect(publicAddressProblem("PAY_TO", privateKeyToAccount(key).address)).toBeUndefined();
    expect(publicKeyProblem("FACILITATOR_PRIVATE_KEY", key)).toBeUndefined();
    expect(publicKeyProblem("FACILITATOR_PRIVATE_KEY", "not a key")).toBeUndefined();
  });
});
