// The console's link: Next's <Link> with prefetching off. Every console route is rendered per
// request (it reads the session), so a prefetch cannot fetch a page ahead of the click; it only runs
// the server's request path to learn the route's shape, and Next starts one for every link on screen
// or hovered. A view of the run page with its links hovered made 28 of them, at 4 to 6 ms of server
// CPU each: several times the page itself (docs/BENCHMARKS.md). Without them a click still navigates
// on the client, fetching the page's payload once. The linter sends every import of next/link here.
import NextLink from 'next/link';
import type { ComponentProps } from 'react';

export function Link(props: Omit<ComponentProps<typeof NextLink>, 'prefetch'>) {
  return <NextLink {...props} prefetch={false} />;
}
