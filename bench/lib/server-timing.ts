/** The phases of a paysvc answer's Server-Timing header, in ms by name (`quote`, `verify`, `upstream`...). */
export function serverTimings(response: Response): Record<string, number> {
  return Object.fromEntries(
    (response.headers.get("server-timing") ?? "")
      .split(",")
      .filter((entry) => entry.includes(";dur="))
      .map((entry) => {
        const [name, duration] = entry.trim().split(";dur=");
        return [name, Number(duration)];
      }),
  );
}
