import { Alert, Stack, TextInput } from '@mantine/core';
import { useAction, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { AuthLayout, BackToSignIn } from '../components/AuthLayout.js';
import { FormSubmit } from '../components/FormSubmit.js';

/** Forgot password: the server emails a link to /setpassword/{id}/{secret}. */
export function ResetPasswordPage(): ReactNode {
  const client = useHearth();
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const { busy, error, submit } = useAction();
  return (
    <AuthLayout title="Reset your password">
      <form
        onSubmit={submit(async () => {
          await client.post('auth/resetpassword', { email: email.trim() }, 'application/json', { noAuth: true });
          setSent(true);
        })}
      >
        <Stack>
          {sent ? (
            <Alert color="green" role="status">
              If an account uses {email}, an email with a link to set a new password is on its way.
            </Alert>
          ) : (
            <>
              <TextInput
                label="Email"
                type="email"
                required
                autoComplete="email"
                value={email}
                onChange={(e) => setEmail(e.currentTarget.value)}
              />
              <FormSubmit busy={busy} error={error}>
                Send reset link
              </FormSubmit>
            </>
          )}
          <BackToSignIn />
        </Stack>
      </form>
    </AuthLayout>
  );
}
