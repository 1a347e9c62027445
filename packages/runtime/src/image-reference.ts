/**
 * Docker's image reference grammar (the registry's `reference` package):
 *
 *   reference        := name [ ":" tag ] [ "@" digest ]
 *   name             := [ domain "/" ] path-component [ "/" path-component ]*   (≤ 255 chars)
 *   domain           := host [ ":" port ]            host: DNS name, IPv4 or [IPv6]
 *   path-component   := [a-z0-9]+ ( separator [a-z0-9]+ )*     separator: "." "_" "__" "-"+
 *   tag              := [\w][\w.-]{0,127}
 *   digest           := algorithm ":" hex{32,}
 *
 * A reference outside it never reaches the engine: the engine puts it in a URL path, where
 * `..` or `?` would address another endpoint.
 */

const alphanumeric = "[a-z0-9]+";
const separator = "(?:[._]|__|-+)";
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`;
const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const domain = `${host}(?::[0-9]+)?`;
const name = `(?:${domain}/)?${pathComponent}(?:/${pathComponent})*`;
const tag = "[\\w][\\w.-]{0,127}";
const digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

const referencePattern = new RegExp(`^(${name})(?::${tag})?(?:@${digest})?$`);
const maxNameLength = 255;

/** Why `reference` is not a Docker image reference, or undefined when it is one. */
export function imageReferenceProblem(reference: string): string | undefined {
  const match = referencePattern.exec(reference);
  if (!match) {
    return `image ${JSON.stringify(reference)} is not an image reference like "debian:12", "registry.example.com:5000/team/app:1.0" or "app@sha256:<hex>" (lowercase name components separated by "/", optional registry host, tag and digest)`;
  }
  const imageName = match[1] ?? "";
  if (imageName.length > maxNameLength)
    return `image ${JSON.stringify(reference)}: the name is longer than ${maxNameLength} characters`;
  return undefined;
}
