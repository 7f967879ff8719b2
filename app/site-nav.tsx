"use client";

import { usePathname } from "next/navigation";

const links = [
  { href: "/", label: "Prices" },
  { href: "/keys", label: "Prepaid key" },
  { href: "/keys/mine", label: "My keys" },
  { href: "/quota", label: "Free quota" },
];

export function SiteNav() {
  const pathname = usePathname();
  return (
    <nav className="site" aria-label="Console">
      {links.map((link) => (
        <a key={link.href} href={link.href} aria-current={pathname === link.href ? "page" : undefined}>
          {link.label}
        </a>
      ))}
    </nav>
  );
}
