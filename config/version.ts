import packageJson from "../package.json";

export const SERVICE_VERSION: string = packageJson.version;
export const API_DESCRIPTION_VERSION = "1.0.0";
