import NextAuth from 'next-auth';
import { problem, problemResponse } from '@/lib/api/problem.ts';
import { authOptions } from '@/lib/auth/options.ts';
import { unavailableSignIn } from '@/lib/auth/sign-in-errors.ts';
import { disabledMethodProblem } from '@/lib/auth/sign-in-methods.ts';

export const dynamic = 'force-dynamic';

async function handler(req: Request, ctx: { params: Promise<{ nextauth: string[] }> }) {
  const refused = disabledMethodProblem(new URL(req.url).pathname);
  if (refused) return problemResponse(problem('forbidden', refused));
  return unavailableSignIn(await (NextAuth(req as never, ctx as never, authOptions()) as Promise<Response>));
}

export { handler as GET, handler as POST };
