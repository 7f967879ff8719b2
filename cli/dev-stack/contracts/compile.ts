// Compiles the local-chain contracts with solc-js and writes their ABI and runtime bytecode next to the sources.
// Run with `npm run contracts:compile` after editing a .sol file; the artifacts are committed so that starting
// the embedded stack never needs the compiler.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const here = dirname(fileURLToPath(import.meta.url));
const contracts = [
  { file: "LocalUsdc.sol", name: "LocalUsdc", artifact: "local-usdc.artifact.json" },
  { file: "Multicall3.sol", name: "Multicall3", artifact: "multicall3.artifact.json" },
  { file: "Permit2.sol", name: "Permit2", artifact: "permit2.artifact.json" },
  {
    file: "X402UptoPermit2Proxy.sol",
    name: "x402UptoPermit2Proxy",
    artifact: "x402-upto-permit2-proxy.artifact.json",
  },
  {
    file: "X402BatchSettlement.sol",
    name: "x402BatchSettlement",
    artifact: "x402-batch-settlement.artifact.json",
  },
  {
    file: "DepositCollectors.sol",
    name: "ERC3009DepositCollector",
    artifact: "erc3009-deposit-collector.artifact.json",
  },
  {
    file: "DepositCollectors.sol",
    name: "Permit2DepositCollector",
    artifact: "permit2-deposit-collector.artifact.json",
  },
  { file: "OwnedWallets.sol", name: "OwnedWalletFactory", artifact: "owned-wallet-factory.artifact.json" },
];

const input = {
  language: "Solidity",
  // Every source here, also those only imported by others (BatchSettlementSignatures.sol).
  sources: Object.fromEntries(
    readdirSync(here)
      .filter((file) => file.endsWith(".sol"))
      .map((file) => [file, { content: readFileSync(join(here, file), "utf8") }]),
  ),
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "cancun",
    outputSelection: { "*": { "*": ["abi", "evm.deployedBytecode.object"] } },
  },
};

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { deployedBytecode: { object: string } } }>>;
}

const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
const errors = (output.errors ?? []).filter((error) => error.severity === "error");
if (errors.length > 0) {
  for (const error of errors) console.error(error.formattedMessage);
  process.exit(1);
}
for (const contract of contracts) {
  const compiled = output.contracts[contract.file]?.[contract.name];
  if (!compiled) throw new Error(`solc produced no output for ${contract.name}`);
  const artifact = {
    contractName: contract.name,
    compiler: `solc ${solc.version()}`,
    abi: compiled.abi,
    runtimeBytecode: `0x${compiled.evm.deployedBytecode.object}`,
  };
  writeFileSync(join(here, contract.artifact), `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(`wrote ${contract.artifact} (${compiled.evm.deployedBytecode.object.length / 2} bytes)`);
}
