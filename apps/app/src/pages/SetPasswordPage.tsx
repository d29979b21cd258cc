import { Alert, Button, PasswordInput, Stack } from '@mantine/core';
import { useAction, useHearth } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { AuthLayout, BackToSignIn } from '../components/AuthLayout.js';
import { FormSubmit } from '../components/FormSubmit.js';

/** Sets a new password from an emailed link (POST /auth/setpassword). */
export function SetPasswordPage(): ReactNode {
  const client = useHearth();
  const { id, secret } = useParams();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [done, setDone] = useState(false);
  const { busy, error, run: runAction } = useAction();
  const mismatch = confirm !== '' && confirm !== password;
  return (
    <AuthLayout title="Set a new password">
      {done ? (
        <Stack>
          <Alert color="green" role="status">
            Your password is set.
          </Alert>
          <Button component={Link} to="/signin">
            Sign in
          </Button>
        </Stack>
      ) : (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            if (mismatch) return;
            await runAction(async () => {
              await client.post('auth/setpassword', { id, secret, password }, 'application/json', { noAuth: true });
              setDone(true);
            });
          }}
        >
          <Stack>
            <PasswordInput
              label="New password"
              required
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <PasswordInput
              label="Confirm password"
              required
              autoComplete="new-password"
              value={confirm}
              error={mismatch ? 'The passwords differ' : undefined}
              onChange={(e) => setConfirm(e.currentTarget.value)}
            />
            <FormSubmit busy={busy} error={error}>
              Set password
            </FormSubmit>
            <BackToSignIn />
          </Stack>
        </form>
      )}
    </AuthLayout>
  );
}
