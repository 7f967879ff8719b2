/**
 * Signing in to the owners' endpoints from the console: the official x402 client with its sign-in-with-x extension
 * (`@x402/fetch`, `@x402/extensions`), the visitor's browser wallet signing the challenge (EIP-4361 text, through
 * personal_sign). The service answers with a session cookie (an hour), so a person signs once per visit.
 */
import { x402Client } from "@x402/core/client";
import { createSIWxClientExtension } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment } from "@x402/fetch";
import { stringToHex } from "viem";
import type { Eip1193Provider } from "../purchase/browser-wallet";

/** Where the owners' endpoints are, on the page's own origin (the session cookie is sent there). */
export const KEYS_PATH = "/v1/prepaid/keys";

/** The answer of an owner's endpoint: its status and JSON body (an error's message included). */
export interface OwnerAnswer<T> {
  status: number;
  body: T & { error?: { message: string } };
}

/** Signs in as `account` through `provider`; the session cookie is then the browser's. */
export async function signInWithWallet(
  provider: Eip1193Provider,
  account: `0x${string}`,
): Promise<OwnerAnswer<{ owner: string }>> {
  // The client's sign-in hook swallows a wallet's refusal (then finds nothing to pay): it is kept here, to be told.
  let refusal: unknown;
  const signer = {
    address: account,
    signMessage: async ({ message }: { message: string }) => {
      try {
        return (await provider.request({
          method: "personal_sign",
          params: [stringToHex(message), account],
        })) as `0x${string}`;
      } catch (error) {
        refusal = error;
        throw error;
      }
    },
  };
  const client = new x402Client().registerExtension(createSIWxClientExtension({ signers: [signer] }));
  let response: Response;
  try {
    response = await wrapFetchWithPayment(fetch, client)(`${KEYS_PATH}/sign-in`, { method: "POST", cache: "no-store" });
  } catch (error) {
    throw refusal ?? error;
  }
  return { status: response.status, body: await response.json() };
}

/** One of the owners' endpoints, with the session cookie. */
export async function ownerCall<T>(action: string, body?: unknown): Promise<OwnerAnswer<T>> {
  const response = await fetch(action ? `${KEYS_PATH}/${action}` : KEYS_PATH, {
    method: body === undefined && action === "" ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  return { status: response.status, body: await response.json() };
}
