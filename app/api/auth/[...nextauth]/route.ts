import NextAuth from 'next-auth';
import { authOptions } from '@/lib/auth/options.ts';

export const dynamic = 'force-dynamic';

async function handler(req: Request, ctx: { params: Promise<{ nextauth: string[] }> }) {
  return NextAuth(req as never, ctx as never, authOptions()) as Promise<Response>;
}

export { handler as GET, handler as POST };
