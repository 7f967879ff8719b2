/**
 * The visitor's browser wallet: found through EIP-6963 announcements (every injected wallet that announces itself),
 * or, for a wallet that does not, the EIP-1193 provider at window.ethereum. No third-party service is involved: the
 * page speaks to the wallet the browser already has.
 */

/** An EIP-1193 provider: one `request` method, errors carrying a numeric `code`. */
export interface Eip1193Provider {
  request(args: { method: string; params?: readonly unknown[] | object }): Promise<unknown>;
}

/** A wallet the page can use: its EIP-6963 description (or a plain one for window.ethereum) and its provider. */
export interface BrowserWallet {
  id: string;
  name: string;
  /** A data URI of the wallet's icon, as announced; absent for window.ethereum. */
  icon?: string;
  provider: Eip1193Provider;
}

interface Eip6963Detail {
  info?: { uuid?: unknown; name?: unknown; icon?: unknown; rdns?: unknown };
  provider?: { request?: unknown };
}

/**
 * Listens for wallets announcing themselves (EIP-6963) and asks them to; `onChange` gets every wallet found so far.
 * Returns the way to stop listening.
 */
export function watchWallets(onChange: (wallets: BrowserWallet[]) => void): () => void {
  const found = new Map<string, BrowserWallet>();
  const listener = (event: Event) => {
    const detail = (event as CustomEvent<Eip6963Detail>).detail;
    const info = detail?.info;
    const provider = detail?.provider;
    if (!info || typeof info.uuid !== "string" || typeof provider?.request !== "function") return;
    found.set(info.uuid, {
      id: info.uuid,
      name: typeof info.name === "string" && info.name ? info.name : "Browser wallet",
      icon: typeof info.icon === "string" && info.icon.startsWith("data:image/") ? info.icon : undefined,
      provider: provider as Eip1193Provider,
    });
    onChange([...found.values()]);
  };
  window.addEventListener("eip6963:announceProvider", listener);
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  return () => window.removeEventListener("eip6963:announceProvider", listener);
}

/** The EIP-1193 provider a wallet without EIP-6963 injects at window.ethereum, if any. */
function legacyInjectedWallet(): BrowserWallet | undefined {
  const provider = (window as unknown as { ethereum?: { request?: unknown } }).ethereum;
  if (typeof provider?.request !== "function") return undefined;
  return { id: "window.ethereum", name: "Browser wallet", provider: provider as Eip1193Provider };
}

/**
 * The browser's wallets now: asked to announce themselves again (they answer synchronously, so any installed since
 * the page loaded are in `announced` once this returns), else the one at window.ethereum, else none.
 */
export function walletsNow(announced: () => BrowserWallet[]): BrowserWallet[] {
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  const found = announced();
  return found.length > 0 ? found : [legacyInjectedWallet()].flatMap((wallet) => wallet ?? []);
}

/** EIP-1193 and EIP-1474 codes the purchase tells apart. */
export const WalletErrorCode = {
  userRejected: 4001,
  unauthorized: 4100,
  unsupportedMethod: 4200,
  unrecognizedChain: 4902,
  requestPending: -32002,
} as const;

/**
 * The numeric code of a wallet's error. Wallets and libraries wrap it (MetaMask mobile answers 4902 inside a -32603's
 * data.originalError; viem keeps the original as `cause`), so the wrappers are looked through.
 */
export function walletErrorCode(error: unknown): number | undefined {
  const seen = new Set<unknown>();
  let codes: number[] = [];
  const visit = (value: unknown) => {
    if (!value || typeof value !== "object" || seen.has(value)) return;
    seen.add(value);
    const record = value as { code?: unknown; data?: { originalError?: unknown }; cause?: unknown };
    if (typeof record.code === "number") codes = [...codes, record.code];
    visit(record.data?.originalError);
    visit(record.cause);
  };
  visit(error);
  // The innermost known code is the wallet's own; a generic internal error (-32603) says less.
  return codes.find((code) => code !== -32603) ?? codes[0];
}

/** The wallet's account after the person allows this page to see it (eth_requestAccounts). */
export async function requestAccount(provider: Eip1193Provider): Promise<`0x${string}` | undefined> {
  const accounts = await provider.request({ method: "eth_requestAccounts" });
  const [first] = Array.isArray(accounts) ? accounts : [];
  return typeof first === "string" && /^0x[0-9a-fA-F]{40}$/.test(first) ? (first as `0x${string}`) : undefined;
}

/** The chain the wallet is on (eth_chainId), as a number. */
export async function walletChainId(provider: Eip1193Provider): Promise<number> {
  const answer = await provider.request({ method: "eth_chainId" });
  return typeof answer === "number" ? answer : Number.parseInt(String(answer), 16);
}

/** The chain to switch to, and how to add it when the wallet does not know it (EIP-3085's parameter). */
export interface TargetChain {
  chainId: number;
  addChain: { chainId: `0x${string}` };
}

export type SwitchOutcome =
  { switched: true } | { switched: false; refused: boolean; chainId: number | undefined; problem?: string };

/**
 * Puts the wallet on `target`: wallet_switchEthereumChain, and when the wallet does not know the chain (4902),
 * wallet_addEthereumChain with the deployment's chain (which wallets switch to once added; asked to switch once
 * more only if it did not). Whatever the wallet answered, the chain it is on afterwards decides.
 */
export async function switchWalletTo(provider: Eip1193Provider, target: TargetChain): Promise<SwitchOutcome> {
  const current = async () => walletChainId(provider).catch(() => undefined);
  if ((await current()) === target.chainId) return { switched: true };
  const chainId = target.addChain.chainId;
  let refused = false;
  let problem: string | undefined;
  try {
    await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId }] });
  } catch (error) {
    const code = walletErrorCode(error);
    if (
      code === WalletErrorCode.unrecognizedChain ||
      /unrecognized chain|chain .*not (been )?added/i.test(`${error}`)
    ) {
      try {
        await provider.request({ method: "wallet_addEthereumChain", params: [target.addChain] });
        if ((await current()) !== target.chainId) {
          await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId }] });
        }
      } catch (addError) {
        refused = walletErrorCode(addError) === WalletErrorCode.userRejected;
        problem = refused ? undefined : messageOf(addError);
      }
    } else {
      refused = code === WalletErrorCode.userRejected;
      problem = refused ? undefined : messageOf(error);
    }
  }
  const after = await current();
  return after === target.chainId ? { switched: true } : { switched: false, refused, chainId: after, problem };
}

/** A wallet error's own words, for the rare failure no sentence of ours covers. */
export function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : (error as { message?: unknown } | null)?.message;
  return typeof message === "string" && message ? message.split("\n")[0]!.slice(0, 200) : String(error);
}
